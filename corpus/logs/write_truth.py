"""Write corpus/logs/<name>.truth.json from the side file a log program wrote.

usage: write_truth.py SIDE_FILE LOG_NAME SETTINGS

The side file holds the counts the program took from its framework's own
bookkeeping (see jax_count.py, tf_count.py, torch_debug.py); this adds the
log name and the settings the log was made with, and decides ``healthy``:
true when no user program compiled more than once (for TensorFlow, per
tf.function: the 'functions' grouping). Stdlib only.
"""
import json
import sys
from pathlib import Path


def main(side_file, log_name, settings):
    side = json.loads(Path(side_file).read_text())
    groups = side.get("functions") or side["programs"]
    unhealthy = sorted(name for name, entry in groups.items()
                       if entry.get("user_program") and entry["compilations"] > 1)
    truth = {
        "log": f"{log_name}.log",
        "framework": side["framework"],
        "framework_version": side["framework_version"],
        "settings": settings,
        "how_counted": side["how_counted"],
        "programs": side["programs"],
        "healthy": not unhealthy,
        "recompiled_user_programs": unhealthy,
        "synthetic": False,
    }
    for key, value in side.items():
        if key not in truth:
            truth[key] = value
    out = Path(__file__).parent / f"{log_name}.truth.json"
    out.write_text(json.dumps(truth, indent=1) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
