"""How many samples a --gpu-metrics trace decoded against its devices' sampled spans / interval (issue 23:
the decoding falling behind). usage: sample_loss.py TRACE"""
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
m = dict(db.execute("SELECT name, value FROM GPT_META"))
iv = int(m["gpu_metrics_interval_ns"])
spans = db.execute("SELECT deviceId, min(start), max(\"end\"), count(*) FROM GPT_GPU_METRICS GROUP BY deviceId").fetchall()
expected = sum((hi - lo) / iv for _, lo, hi, _ in spans)
got = int(m.get("gpu_metric_samples", 0)) + int(m.get("gpu_metric_samples_idle", 0))
print(sys.argv[1].split("/")[-1], "devices", [(d, n, round((hi - lo) / 1e9, 2)) for d, lo, hi, n in spans],
      "decoded %d of %.0f expected (%.1f%%)" % (got, expected, 100 * got / expected if expected else 0),
      "image_full", m.get("gpu_metrics_image_full"), "decode_cpu_ms", m.get("gpu_metrics_decode_cpu_ms"))
