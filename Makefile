# Thin convenience layer over ./hsdr-bench and CMake (the README's commands are ./hsdr-bench bench / test).
.PHONY: bench test plots tables vectors clean
RESULTS ?= results/latest
bench:
	./hsdr-bench bench
test:
	./hsdr-bench test
# figures + REPORT.md of one results directory, from its files alone: make plots RESULTS=results/epyc-2c-vm
plots:
	scripts/ensure-deps.sh plots
	plots/run $(RESULTS)
# regenerate the committed constant tables and test vectors (then commit them)
tables:
	python3 scripts/gen_tables.py
vectors:
	/usr/bin/python3 vectors/generate.py
clean:
	rm -rf build build-sanitize build.configure.log build-sanitize.configure.log
