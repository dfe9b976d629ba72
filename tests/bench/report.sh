#!/usr/bin/env bash
# tests/bench/report.sh: $B/bench/report.html from the last benchmark run: one plot per
# series file the bench scripts wrote ($B/bench/series/*.dat, format in series.sh), drawn
# with gnuplot (Debian's gnuplot-nox), then the run's text output ($B/bench/report.txt,
# which tests/bench/run.sh keeps). Run by tests/bench/run.sh at its end; runnable alone
# after any bench script. Prints the path of the page.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${B:-build}
dir=$B/bench/series
html=$B/bench/report.html
command -v gnuplot >/dev/null || { echo "report: no gnuplot (make deps installs gnuplot-nox)" >&2; exit 1; }
esc() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'; }
meta() { awk -F'\t' -v k="# $2" '$1 == k { print $2; exit }' "$1"; }

{
    echo '<!doctype html><html><head><meta charset="utf-8"><title>ukmpi benchmarks</title>'
    echo '<style>body{font-family:sans-serif;margin:2em} svg{max-width:100%;height:auto}'
    echo 'figure{display:inline-block;margin:0 1em 2em 0;width:46em} pre{font-size:80%}</style></head><body>'
    echo "<h1>ukmpi benchmarks</h1><p>$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) host cores, load average $(cut -d' ' -f1-3 /proc/loadavg).</p>"
    for f in "$dir"/*.dat; do
        [ -e "$f" ] || { echo '<p>No series: run make bench (or a tests/bench/*.bench.sh) first.</p>'; break; }
        n=$(awk -F'\t' '$1 == "x" { print NF; exit }' "$f")
        rows=$(grep -vc -e '^#' -e '^x	' "$f" || true)
        [ "${n:-0}" -ge 2 ] && [ "$rows" -ge 1 ] || continue
        title=$(meta "$f" title)
        log=
        [ "$(meta "$f" logy)" = 1 ] && log='set logscale y;'
        echo "<figure><figcaption>$(esc <<<"$title") <small>($(basename "$f"))</small></figcaption>"
        # The header row names the curves; the comment lines are skipped as comments.
        gnuplot -e "set terminal svg size 720,400 dynamic font 'sans,10'; set output;
            set datafile separator '\t'; set datafile commentschars '#';
            set key outside right top; set grid ytics; set xtics rotate by -30; $log
            set ylabel '$(meta "$f" ylabel | tr -d "'")'; set offsets 0.3, 0.3, 0, 0;
            plot for [i=2:$n] '$f' using 0:i:xtic(1) with linespoints pointsize 0.8 title columnheader(i)" |
            sed -e '/^<?xml/d' -e '/^<!DOCTYPE/,/>$/d'
        echo '</figure>'
    done
    if [ -s "$B/bench/report.txt" ]; then
        echo '<h2>The run</h2><pre>'
        esc <"$B/bench/report.txt"
        echo '</pre>'
    fi
    echo '</body></html>'
} >"$html"
echo "report: $html"
