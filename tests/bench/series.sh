# tests/bench/series.sh: sourced by the bench scripts. Besides the rows they print, they
# record the figures worth a picture as series files, which tests/bench/report.sh turns into
# plots in $B/bench/report.html (issue 16: people compare curves faster than tables).
#
# A series file, $B/bench/series/NAME.dat, is tab-separated text:
#   # title<TAB>what the plot shows
#   # ylabel<TAB>the unit of the values
#   # logy<TAB>1 for a logarithmic value axis, else 0
#   x<TAB>SERIES1<TAB>SERIES2...      one column per curve (ours, a baseline, a floor)
#   LABEL<TAB>V1<TAB>V2...            one row per x point, in order; NaN: none (a gap)
SERIES_DIR=${B:-build}/bench/series

# series_new NAME TITLE YLABEL LOGY SERIES...: start (or replace) a series file.
series_new() {
    local f=$SERIES_DIR/$1.dat
    mkdir -p "$SERIES_DIR"
    {
        printf '# title\t%s\n# ylabel\t%s\n# logy\t%s\nx' "$2" "$3" "$4"
        shift 4
        printf '\t%s' "$@"
        printf '\n'
    } >"$f"
}

# series_row NAME LABEL VALUE...: one point of every curve; an empty value is NaN.
series_row() {
    local f=$SERIES_DIR/$1.dat v
    printf '%s' "$2" >>"$f"
    shift 2
    for v in "$@"; do printf '\t%s' "${v:-NaN}" >>"$f"; done
    printf '\n' >>"$f"
}
