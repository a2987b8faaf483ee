set -u
SPMV_FORMATS=" " PARTS=spmv CG_ITERATIONS=100 bash scripts/gpu_several_devices.sh 2>&1 | tail -40
