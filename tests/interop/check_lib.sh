# check_lib.sh: the pass/fail counters of the interop scripts (sourced, bash).
TP=0
TF=0
# Records one check: ok NAME / bad NAME [detail].
ok() {
    echo "PASS $1"
    TP=$((TP + 1))
}
bad() {
    echo "FAIL $1${2:+: $2}"
    TF=$((TF + 1))
}
