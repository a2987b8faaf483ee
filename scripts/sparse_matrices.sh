# Sourced by the sparse scripts (gpu_sparse.sh, gpu_sparse_fusion.sh, sparse_selection.sh): the generated
# matrices they name, one table, and the csr parts torch reads them from.

# sparse_source NAME: the "from" of a symbol holding the matrix NAME; fails for a name not in the table.
sparse_source() {
  case $1 in
    poisson512) echo '{"poisson": {"grid": [512, 512]}}' ;;
    poisson1024) echo '{"poisson": {"grid": [1024, 1024]}}' ;;
    poisson2048) echo '{"poisson": {"grid": [2048, 2048]}}' ;;
    poisson4096) echo '{"poisson": {"grid": [4096, 4096]}}' ;;
    rmat16) echo '{"rmat": {"scale": 16, "edges": 16, "seed": 1}}' ;;
    rmat18) echo '{"rmat": {"scale": 18, "edges": 16, "seed": 1}}' ;;
    rmat20) echo '{"rmat": {"scale": 20, "edges": 16, "seed": 1}}' ;;
    rmat21) echo '{"rmat": {"scale": 21, "edges": 16, "seed": 1}}' ;;
    rmat22) echo '{"rmat": {"scale": 22, "edges": 16, "seed": 1}}' ;;
    rmat20e4) echo '{"rmat": {"scale": 20, "edges": 4, "seed": 1}}' ;;
    rmat18e64) echo '{"rmat": {"scale": 18, "edges": 64, "seed": 1}}' ;;
    fem10k) echo '{"fem": {"nodes": 10000, "block": 3, "neighbours": 4, "seed": 1}}' ;;
    fem300k) echo '{"fem": {"nodes": 300000, "block": 3, "neighbours": 4, "seed": 1}}' ;;
    fem1m) echo '{"fem": {"nodes": 1000000, "block": 3, "neighbours": 4, "seed": 1}}' ;;
    fem10k4) echo '{"fem": {"nodes": 10000, "block": 4, "neighbours": 4, "seed": 1}}' ;;
    fem300k4) echo '{"fem": {"nodes": 300000, "block": 4, "neighbours": 4, "seed": 1}}' ;;
    fem1m4) echo '{"fem": {"nodes": 1000000, "block": 4, "neighbours": 4, "seed": 1}}' ;;
    banded16) echo '{"banded": {"rows": 1048576, "width": 16, "seed": 1}}' ;;
    band14) echo '{"banded": {"rows": 16384, "width": 9, "scattered": 1, "long_rows": 4, "long_row_entries": 2000, "seed": 1}}' ;;
    bandlong21) echo '{"banded": {"rows": 2097152, "width": 9, "long_rows": 16, "seed": 1}}' ;;
    bandscatter21) echo '{"banded": {"rows": 2097152, "width": 9, "scattered": 2, "seed": 1}}' ;;
    bandmix20) echo '{"banded": {"rows": 1048576, "width": 16, "scattered": 1, "long_rows": 64, "seed": 1}}' ;;
    *) return 1 ;;
  esac
}

# sparse_csr_parts F OUT NAME: the matrix NAME's csr parts (f64) as OUT/parts_NAME/{row_ptr,col,data}.npy,
# written by the fugue binary F, and its rows (these matrices are square: x's length) in OUT/cols_NAME.
sparse_csr_parts() {
  local F=$1 out=$2 m=$3
  cat > "$out/shape.json" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": "csr", "dtype": "f64", "from": $(sparse_source $m)}}, "body": [],
 "outputs": {"A.row_ptr": "row_ptr.npy", "A.col": "col.npy", "A.data": "data.npy"}}
JSON
  rm -rf "$out/parts_$m"; $F run "$out/shape.json" --out "$out/parts_$m" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
  python3 -c "import numpy as np; print(np.load('$out/parts_$m/row_ptr.npy', mmap_mode='r').shape[0] - 1)" > "$out/cols_$m"
}
