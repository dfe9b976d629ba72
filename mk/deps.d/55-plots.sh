# gnuplot (Debian's gnuplot-nox): the plots of make bench's report.html (tests/bench/report.sh).
PKGS+=(gnuplot-nox)
