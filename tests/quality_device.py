"""quality_device.py FILE: a device variant inside `hsdr quality` must compute on each token's activations. The study
file holds cpu.production and vulkan.q8_0, which are bit-identical designs (PTQ1_0 x Q8_0, the fused fp32
sequence): every metric of the two paths must be equal. A device run that kept the activations of its setup instead
(the bug this guards) gives a layer-1 NMSE near 0.2 instead."""
import json
import sys

doc = json.load(open(sys.argv[1]))
paths = {p["variant"]: p for p in doc["paths"]}
cpu, dev = paths["cpu.production"], paths["vulkan.q8_0"]
if (cpu["samples"], cpu["per_layer"], cpu["final"]) != (dev["samples"], dev["per_layer"], dev["final"]):
    sys.exit(f"quality_device: vulkan.q8_0 {dev['final']} differs from cpu.production {cpu['final']}")
print(f"quality_device: vulkan.q8_0 equals cpu.production on {len(cpu['samples'])} samples")
