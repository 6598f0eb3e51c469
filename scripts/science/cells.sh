# shellcheck shell=bash
# Sourced by the science scripts: which points of a sweep folder are finished cells. A cell is a point's id
# without its seed (seed=S_ leads every id of a seeded grid), so a cell holds one setup's seeds. Nothing is
# concluded from a cell with fewer seeds than its grid has (docs/findings.md), and the lr and setup selections pair
# over the seeds every lr has, so one new point at a new lr cuts a finished sweep's paired seeds to that point's.

# sweep_points MODE DIR SWEEP_EXE: the done points of the sweep folder DIR (as DIR/<id>), from `xsa-sweep --status`.
#   complete     the points whose cell has every seed done;
#   committable  the points of complete cells, and of every cell while no cell of the sweep is complete yet (a
#                sweep that runs seed by seed shows its first seeds); a point of an unfinished cell waits once
#                some cell is complete (a grid grown by an lr after its seeds were done).
sweep_points() {
  local mode=$1 dir=$2 exe=$3 listing rc=0
  case $mode in complete | committable) ;; *) echo "sweep_points: unknown mode '$mode'" >&2; return 2 ;; esac
  listing=$("$exe" --status "$dir") || rc=$?
  case $rc in 0 | 1 | 3) ;; *) return "$rc" ;; esac  # 1: a point failed, 3: points not done; both list every point
  awk -v dir="$dir" -v mode="$mode" '
    NF >= 2 && $2 ~ /^(done|running|interrupted|failed|pending)$/ {
      id[++n] = $1; cell = $1; sub(/^seed=[0-9]+_/, "", cell); of[n] = cell
      points[cell]++; if ($2 == "done") { done[cell]++; isdone[n] = 1 } }
    END { any = 0
          for (c in points) if (done[c] == points[c]) any = 1
          for (i = 1; i <= n; i++) {
            if (!isdone[i]) continue
            whole = done[of[i]] == points[of[i]]
            if (whole || (mode == "committable" && !any)) print dir "/" id[i] } }' <<< "$listing"
}
