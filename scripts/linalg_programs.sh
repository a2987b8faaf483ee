# linalg_programs.sh (sourced): the benchmark programs of the linalg plugin, shared by
# scripts/gpu_linalg.sh (H100) and scripts/pocl_linalg.sh (this machine).
#   program op count n dtype lower file
# writes to `file` a program of `count` n x n matrices of `dtype`: potrf of SPD matrices (cond 100,
# lower true/false), getrf or geqrf of uniform [-1, 1) matrices, gemm C = A B of two such batches, or gels
# of 2n x n such matrices with two right-hand sides each.
program() {
  if [ "$1" = potrf ]; then
    cat > "$6" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": "array", "dtype": "$4", "shape": [$2, $3, $3], "from": {"spd": {"seed": 1, "cond": 100}}}},
 "body": [{"op": "linalg.potrf", "out": ["L", "info"], "in": ["A"], "attrs": {"lower": $5}}],
 "outputs": {"L": "L.npy", "info": "info.npy", "A": "A.npy"}}
JSON
  elif [ "$1" = getrf ]; then
    cat > "$6" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": "array", "dtype": "$4", "shape": [$2, $3, $3], "from": {"random": {"seed": 1, "low": -1, "high": 1}}}},
 "body": [{"op": "linalg.getrf", "out": ["LU", "ipiv", "info"], "in": ["A"]}],
 "outputs": {"LU": "LU.npy", "ipiv": "ipiv.npy", "info": "info.npy", "A": "A.npy"}}
JSON
  elif [ "$1" = geqrf ]; then
    cat > "$6" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": "array", "dtype": "$4", "shape": [$2, $3, $3], "from": {"random": {"seed": 1, "low": -1, "high": 1}}}},
 "body": [{"op": "linalg.geqrf", "out": ["QR", "tau"], "in": ["A"]}],
 "outputs": {"QR": "QR.npy", "tau": "tau.npy", "A": "A.npy"}}
JSON
  elif [ "$1" = gels ]; then
    cat > "$6" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": "array", "dtype": "$4", "shape": [$2, $(( 2 * $3 )), $3], "from": {"random": {"seed": 1, "low": -1, "high": 1}}},
                         "B": {"kind": "array", "dtype": "$4", "shape": [$2, $(( 2 * $3 )), 2], "from": {"random": {"seed": 2, "low": -1, "high": 1}}}},
 "body": [{"op": "linalg.gels", "out": ["X", "info"], "in": ["A", "B"]}],
 "outputs": {"X": "X.npy", "info": "info.npy", "A": "A.npy", "B": "B.npy"}}
JSON
  else
    cat > "$6" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": "array", "dtype": "$4", "shape": [$2, $3, $3], "from": {"random": {"seed": 1, "low": -1, "high": 1}}},
                         "B": {"kind": "array", "dtype": "$4", "shape": [$2, $3, $3], "from": {"random": {"seed": 2, "low": -1, "high": 1}}}},
 "body": [{"op": "linalg.gemm", "out": ["C"], "in": ["A", "B"]}],
 "outputs": {"C": "C.npy", "A": "A.npy", "B": "B.npy"}}
JSON
  fi
}
