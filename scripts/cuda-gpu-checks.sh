#!/usr/bin/env bash
# The CUDA checks, run on a GPU machine from the unpacked bundle of scripts/cuda-bundle.sh (it is the
# bundle's run.sh). Each step writes its output to $OUT as it finishes, most important first, each under
# its own time limit, so a run cut short still leaves what it measured:
#   1. nvidia-smi, chipfit devices --measure (bandwidth and peak per precision);
#   2. the CUDA kernel tests (cuda_test: kernels against the reference kernels);
#   3. compute-sanitizer memcheck on the kernel tests;
#   4. the real models on every CUDA precision against ONNX Runtime (the GPU machine's Python package),
#      with cpu:fp32 outputs as the oracle for chipfit;
#   5. conformance on cuda:0:fp32 against ref:fp32 (the ONNX backend suite);
#   6. chipfit profile of every model on every CUDA precision (p50, drift, measured energy).
# Usage (on the GPU machine): tar -C /tmp/b -xJf gpu-bundle.tar.xz && OUT=/out /tmp/b/run.sh [STEP ...]
set -uo pipefail
B=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$B/out}
mkdir -p "$OUT"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(devices kernels memcheck models conformance profile)

# cuBLASLt and cuDNN: the CUDA toolkit's, else those of PyTorch's wheels (site-packages/nvidia/*/lib).
cuda_dirs=$(ls -d /usr/local/cuda/lib64 2>/dev/null)
for d in $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
  cuda_dirs="$cuda_dirs $(ls -d "$d"/nvidia/*/lib 2>/dev/null | tr '\n' ' ')"
done
libpath="$B/lib:$(echo $cuda_dirs | tr ' ' ':')"
# The machine's own glibc when it is new enough for the binaries, else the bundled one and its loader.
if LD_LIBRARY_PATH="$libpath" "$B/bin/chipfit" --version > /dev/null 2>&1; then
  run() { LD_LIBRARY_PATH="$libpath" "$@"; }
  echo "glibc: the machine's own" | tee "$OUT/loader.txt"
else
  run() { local exe=$1; shift; "$B/glibc/ld-linux-x86-64.so.2" --library-path "$B/glibc:$libpath" "$exe" "$@"; }
  echo "glibc: bundled (the machine's is older than the binaries need)" | tee "$OUT/loader.txt"
fi
chipfit="$B/bin/chipfit"
models=("$B"/models/*.onnx)
targets=cuda:0:fp32,cuda:0:tf32,cuda:0:fp16,cuda:0:bf16
shape_of() {
  case "$(basename "$1")" in
    ppocrv4_det.onnx) echo "--shape x=1x3x640x640" ;;
    ppocrv4_rec.onnx) echo "--shape x=1x3x48x320" ;;
    ppocr_mobile_v2_cls.onnx) echo "--shape x=1x3x48x192" ;;
    *) echo "" ;;
  esac
}

for step in "${steps[@]}"; do
  start=$(date +%s)
  case "$step" in
    devices)
      nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
      timeout 120 bash -c "$(declare -f run); libpath='$libpath' B='$B'; run '$chipfit' devices --measure" \
        > "$OUT/devices.txt" 2>&1 ;;
    kernels)
      timeout 240 bash -c "$(declare -f run); libpath='$libpath' B='$B'; run '$B/bin/cuda_test' \
        --gtest_output=xml:'$OUT/cuda_test.xml'" > "$OUT/cuda_test.txt" 2>&1 ;;
    memcheck)
      timeout 300 compute-sanitizer --tool memcheck --error-exitcode 1 --log-file "$OUT/memcheck.log" \
        env LD_LIBRARY_PATH="$libpath" "$B/bin/cuda_test" --gtest_filter='-*Plan*:*Refusal*' \
        > "$OUT/memcheck.txt" 2>&1 ;;
    models)
      for m in "${models[@]}"; do
        name=$(basename "$m" .onnx)
        mkdir -p "$OUT/models/$name"
        python3 - "$m" "$OUT/models/$name" <<'PY' > "$OUT/models/$name/inputs.txt" 2>&1
# Seeded inputs for every graph input (dynamic dims: 1, or the bench's sizes), and ORT's outputs.
import sys, numpy as np, onnxruntime as ort
model, out = sys.argv[1], sys.argv[2]
sizes = {"ppocrv4_det": (1, 3, 640, 640), "ppocrv4_rec": (1, 3, 48, 320), "ppocr_mobile_v2_cls": (1, 3, 48, 192)}
s = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
rng = np.random.default_rng(7)
feeds = {}
for i in s.get_inputs():
    name = model.rsplit("/", 1)[-1][:-5]
    shape = sizes.get(name) or [d if isinstance(d, int) else 1 for d in i.shape]
    feeds[i.name] = rng.uniform(-1, 1, size=shape).astype(np.float32)
    np.save(f"{out}/in_{i.name}.npy", feeds[i.name])
    print(i.name, feeds[i.name].shape)
for o, v in zip(s.get_outputs(), s.run(None, feeds)):
    np.save(f"{out}/ort_{o.name.replace('/', '_').replace(':', '_')}.npy", v)
PY
        inputs=()
        for f in "$OUT/models/$name"/in_*.npy; do n=$(basename "$f" .npy); inputs+=(--input "${n#in_}=$f"); done
        for t in cpu:fp32 cuda:0:fp32 cuda:0:tf32 cuda:0:fp16 cuda:0:bf16; do
          timeout 120 bash -c "$(declare -f run); libpath='$libpath' B='$B'; run '$chipfit' run '$m' --target $t \
            ${inputs[*]} --output-dir '$OUT/models/$name/${t//:/_}'" >> "$OUT/models/$name/run.txt" 2>&1
        done
      done
      python3 - "$OUT/models" <<'PY' > "$OUT/models.txt" 2>&1
# Per model, output and target: max |a-b| / max |b| and SQNR against cpu:fp32 and against ORT.
import sys, glob, os, numpy as np
root = sys.argv[1]
def sqnr(a, b):
    e = np.sum((a.astype(np.float64) - b) ** 2)
    return float("inf") if e == 0 else 10 * np.log10(np.sum(b.astype(np.float64) ** 2) / e)
for model in sorted(os.listdir(root)):
    for ref in sorted(glob.glob(f"{root}/{model}/ort_*.npy")):
        out = os.path.basename(ref)[4:]
        b = np.load(ref)
        cpu = f"{root}/{model}/cpu_fp32/{out}"
        for t in ["cpu_fp32", "cuda_0_fp32", "cuda_0_tf32", "cuda_0_fp16", "cuda_0_bf16"]:
            p = f"{root}/{model}/{t}/{out}"
            if not os.path.exists(p):
                print(f"{model} {out} {t}: no output"); continue
            a = np.load(p)
            rel = float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))
            line = f"{model} {out} {t}: vs ORT rel {rel:.3g} SQNR {sqnr(a, b):.1f} dB"
            if os.path.exists(cpu) and t != "cpu_fp32":
                line += f"; vs cpu:fp32 SQNR {sqnr(a, np.load(cpu)):.1f} dB"
            print(line)
PY
      ;;
    conformance)
      timeout 420 bash -c "$(declare -f run); libpath='$libpath' B='$B'; run '$chipfit' conformance \
        --suite '$B/suite/node' --suite '$B/suite/simple' --suite '$B/suite/pytorch-converted' \
        --suite '$B/suite/pytorch-operator' --targets ref:fp32,cuda:0:fp32 --json" \
        > "$OUT/conformance.json" 2> "$OUT/conformance.err" ;;
    profile)
      for m in "${models[@]}"; do
        name=$(basename "$m" .onnx)
        timeout 240 bash -c "$(declare -f run); libpath='$libpath' B='$B'; run '$chipfit' profile '$m' \
          $(shape_of "$m") --targets $targets --json '$OUT/profile-$name.json'" > "$OUT/profile-$name.txt" 2>&1
      done ;;
    *) echo "unknown step $step" >&2 ;;
  esac
  echo "$step: exit $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/steps.txt"
done
