"""The side-by-side table both benchmarks print: one markdown row per (model, mode) with
eager, Inductor and tgc medians, tgc / the faster of eager and Inductor, both compile times
and their ratio, then the geometric means of the ratios."""

import math

COLUMNS = ("model", "mode", "eager ms", "inductor ms", "tgc ms", "tgc/best",
           "tgc compile s", "inductor compile s", "compile tgc/inductor", "check")


# A side whose median exceeds its minimum this many times was disturbed (other jobs,
# spinning OpenMP threads descheduled): its row says so.
NOISY = 3


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def finish_row(row):
    """Adds ratio_best (tgc / min(eager, inductor) medians) and compile_ratio."""
    best = [row.get(k) for k in ("eager_ms_median", "inductor_ms_median")]
    best = [x for x in best if x is not None]
    tgc = row.get("tgc_ms_median")
    row["ratio_best"] = tgc / min(best) if tgc is not None and best else None
    tc, ic = row.get("tgc_compile_s"), row.get("inductor_compile_s")
    failed = row.get("status") == "compile failed"  # its time is not a compile time
    row["compile_ratio"] = tc / ic if tc is not None and ic and not failed else None
    return row


def _num(x, fmt):
    return "-" if x is None else format(x, fmt)


def check_text(row):
    if row.get("skipped"):
        return "SKIPPED: " + row["skipped"]
    parts = []
    status = row.get("status", "ok")
    parts.append("ok" if status == "ok" else status.upper())
    noisy = [side for side in ("eager", "inductor", "tgc")
             if row.get(f"{side}_ms_min") and row[f"{side}_ms_median"] > NOISY * row[f"{side}_ms_min"]]
    if noisy:
        parts.append(f"noisy: {', '.join(noisy)} median > {NOISY}x min")
    if row.get("inductor_problem"):
        text = row["inductor_problem"]
        parts.append("inductor: " + (text if len(text) <= 80 else text[:77] + "..."))
    return "; ".join(parts)


def markdown(rows):
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in rows:
        cells = [r["model"], r["mode"],
                 _num(r.get("eager_ms_median"), ".3f"), _num(r.get("inductor_ms_median"), ".3f"),
                 _num(r.get("tgc_ms_median"), ".3f"), _num(r.get("ratio_best"), ".2f"),
                 "-" if r.get("status") == "compile failed" else _num(r.get("tgc_compile_s"), ".2f"),
                 _num(r.get("inductor_compile_s"), ".2f"),
                 _num(r.get("compile_ratio"), ".2f"), check_text(r)]
        lines.append("| " + " | ".join(cells) + " |")
    gm = geomean(r.get("ratio_best") for r in rows)
    gc = geomean(r.get("compile_ratio") for r in rows)
    lines.append("")
    lines.append(f"geometric mean tgc/best: {_num(gm, '.3f')} over "
                 f"{sum(r.get('ratio_best') is not None for r in rows)} rows; "
                 f"compile tgc/inductor: {_num(gc, '.3f')}")
    return "\n".join(lines)


def summary(rows):
    return {"geomean_ratio_best": geomean(r.get("ratio_best") for r in rows),
            "geomean_compile_ratio": geomean(r.get("compile_ratio") for r in rows)}
