// Transpose of the last two dims through local memory: a TILE x TILE block is read along source rows
// and written along destination rows, so both global accesses are coalesced. Other permutations run
// copy.cl's strided_copy. ELEM is chosen by the host from the element size.
#define TILE 32
#define ROWS 8  // work-items per tile column; each moves TILE / ROWS elements

// src: planes of rows x cols (plane = global id 2); dst: planes of cols x rows. Work-group TILE x ROWS.
__kernel void transpose_tiled(__global const ELEM* src, __global ELEM* dst, int rows, int cols) {
  __local ELEM tile[TILE][TILE + 1];  // +1 column: no bank conflicts on the transposed read
  const int tx = (int)get_local_id(0);
  const int ty = (int)get_local_id(1);
  const int col0 = (int)get_group_id(0) * TILE;
  const int row0 = (int)get_group_id(1) * TILE;
  const int plane = (int)get_global_id(2) * rows * cols;
  for (int r = ty; r < TILE; r += ROWS) {
    const int row = row0 + r, col = col0 + tx;
    if (row < rows && col < cols) tile[r][tx] = src[plane + row * cols + col];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int r = ty; r < TILE; r += ROWS) {
    const int col = col0 + r, row = row0 + tx;
    if (col < cols && row < rows) dst[plane + col * rows + row] = tile[tx][r];
  }
}
