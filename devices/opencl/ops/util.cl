// Small kernels the runtime and tests use: fill a float tensor with one value.
__kernel void cf_fill(__global store_t* out, float value, uint n) {
  const uint i = get_global_id(0);
  if (i < n) STOREF(out, i, value);
}
