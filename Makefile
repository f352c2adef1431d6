# grpc-perflab: `make run` measures and renders; `make test` checks everything.
# Both start from a fresh machine: the venv, apt packages, Go tools and builds are
# installed by the recipes and roles below, never by hand.

PYTHON     ?= python3
VENV       := .venv
BIN        := $(VENV)/bin
PROFILE    ?= quick
TOPOLOGY   ?= localhost
INVENTORY  ?= inventory/$(TOPOLOGY).yml
RUN_ID     ?=
RUN        ?=
# A subset of the studies, space-separated (default: every study, perflab.studies.registry()).
STUDIES    ?=
# Extra variables for the run as one YAML/JSON mapping, e.g. a profile override:
#   VARS='{"perflab_profiles_orders": {"quick": {"latency_profiles": [none, lan]}}}'
VARS       ?=
STUDIES_JSON = [$(subst $(space),$(comma),$(patsubst %,"%",$(strip $(STUDIES))))]
space := $(subst ,, )
comma := ,
# The host prefix (venv/, bin/, gen/); default ~/.perflab. Tests read the same variable.
PERFLAB_HOME ?=
PLAYBOOK   := $(BIN)/ansible-playbook -i $(INVENTORY) $(if $(PERFLAB_HOME),-e perflab_home=$(PERFLAB_HOME))
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
# ansible-lint and ansible-playbook find their siblings (ansible-galaxy, ansible-config) here.
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: help venv lock setup run-args run run-dir report readings simulate simulate-pooling look-budget lab test test-fast unit-tests lint netns-up netns-down

help:
	@echo "make run     [PROFILE=smoke|quick|full] [RUN_ID=...] [STUDIES=\"hello orders\"] [TOPOLOGY=netns]"
	@echo "                                                     set up, measure, collect, render"
	@echo "make report  RUN=data/<run_id>                        re-render reports from raw data"
	@echo "make report  RUNS=\"data/readings/*.json ...\"          pool runs into reports/pooled/"
	@echo "make lab     RUN=data/<run_id> [LAB_PORT=8888]        JupyterLab on notebooks/, that run loaded"
	@echo "make test                                             set up, then every test (CI runs this)"
	@echo "make test-fast                                        ruff, ansible-lint, unit tests: no setup"
	@echo "make setup                                            install everything on the hosts"
	@echo "make netns-up / netns-down                            the two simulated hosts (TOPOLOGY=netns)"
	@echo "make lint                                             ruff + ansible-lint"
	@echo "make simulate [TRIALS=n]                              the verdicts' coverage by simulation"

# The controller's whole dependency tree, every file checked against its hash in the lock.
$(VENV)/.installed: requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/pip install --quiet --no-deps -e .
	touch $@

venv: $(VENV)/.installed

# Re-resolve each lock from the hand-edited pins beside it (run after editing them; commit
# both): the controller's requirements.lock, and the hosts' venvs (servers/python), whose
# transitive libraries would otherwise float between two installs of one commit.
# uv runs from a venv of its own, never the controller's.
UV_VERSION := 0.13.9
UV_COMPILE  = $(VENV)-lock/bin/uv pip compile --quiet --universal --python-version 3.11 \
	--generate-hashes --custom-compile-command "make lock"
HOST_LOCKS := servers/python/requirements.lock servers/python/requirements-seed001.lock
lock:
	$(PYTHON) -m venv $(VENV)-lock
	$(VENV)-lock/bin/pip install --quiet uv==$(UV_VERSION)
	$(UV_COMPILE) requirements.txt -o requirements.lock
	$(foreach lock,$(HOST_LOCKS),$(UV_COMPILE) $(lock:.lock=.txt) -o $(lock) &&) true

setup: venv
	$(PLAYBOOK) playbooks/setup.yml

# What a run is asked for is checked first, with the system Python (no venv, no setup yet):
# one line naming a bad run id, study or profile, and nothing is created.
run-args: export PERFLAB_ARG_RUN_ID = $(RUN_ID)
run-args: export PERFLAB_ARG_PROFILE = $(PROFILE)
run-args: export PERFLAB_ARG_STUDIES = $(STUDIES)
run-args:
	@$(PYTHON) -m perflab.runargs run --run-id="$$PERFLAB_ARG_RUN_ID" --profile="$$PERFLAB_ARG_PROFILE" --studies="$$PERFLAB_ARG_STUDIES"

# The netns topology's two simulated hosts are made first (a no-op when they exist).
run: run-args venv $(if $(filter netns,$(TOPOLOGY)),netns-up)
	$(PLAYBOOK) playbooks/run_all.yml -e perflab_profile=$(PROFILE) $(if $(RUN_ID),-e perflab_run_id=$(RUN_ID)) $(if $(STUDIES),-e '{"perflab_studies": $(STUDIES_JSON)}') $(if $(VARS),-e '$(VARS)')

# RUN, checked before anything else: an existing, readable folder named by a run id.
run-dir: export PERFLAB_ARG_RUN = $(RUN)
run-dir:
	@test -n "$$PERFLAB_ARG_RUN" || { echo "usage: make $(MAKECMDGOALS) RUN=data/<run_id>" >&2; exit 2; }
	@$(PYTHON) -m perflab.runargs run-dir "$$PERFLAB_ARG_RUN"

# RUNS="a b ..." (run folders or data/readings/<run_id>.json files) pools those runs into
# reports/pooled/ instead: every run a site (perflab.analysis.pooled), e.g.
#   make report RUNS="data/readings/*.json"  (the recipe's shell expands the glob; a list with
#   newlines in it, as from $(ls ...), is joined by spaces first)
RUNS       ?=
report: $(if $(RUNS),,run-dir) venv
ifneq ($(strip $(RUNS)),)
	$(BIN)/python -m perflab verdicts --runs $(strip $(RUNS)) --out reports/pooled
else
	$(BIN)/python -m perflab report --run-dir $(RUN) --out reports/$(notdir $(RUN:/=))
endif

# The readings files the pooled report reads (data/readings/, tens of KiB each): the committed
# reference runs of reference_runs.yml, and the earlier ones recovered from the history,
# each as <run_id>@<the commit that held it> (git archive; nothing large is kept).
HISTORY_RUNS := 20261123-reference@5606e601 20261124-reference@1c1e4be8 \
	20261124-quick-a@ae1c8116 20261124-quick-b@fc1b3afa \
	20261123-reference-netns@b6efadfe 20261124-reference-netns@ae1c8116 \
	20261125-quick@7e071fda \
	20261125-reference@cb7895c1 20261125-netns@e57c1fbe \
	20261126-reference@155e76b1 20261126T170452Z-quick@b051d61d \
	20261127T012251Z-quick@1e3bd613 20261127T044109Z-quick@4b48fe3b \
	20261127T082212Z-quick@085342aa 20261127T111956Z-quick@32dc4d3c 20261127T210549Z-quick@0e538143 \
	20261126-netns@a916765a 20261127-netns@6f8aea72 20261128T010419Z-quick@17cf1937 \
	20261128T071013Z-quick@16e76e38 20261128-netns@2aa71718 20261128T104258Z-quick@e16659b4 \
	20261128T163832Z-quick@b26af82d 20261128T1315Z-netns@8825988a \
	20261128T205830Z-quick@de84568f 20261129T041406Z-quick@ccdf870b
# Committed run folders that are neither a reference nor recovered: sites of their own, a
# study measured again on another boot (20261127T175154Z-quick: pyclients, to see whether
# the grpcio clients' 4.6 MB higher RSS on 20261127T111956Z-quick came back; it did not.
# 20261127T182348Z-quick: orders, the first with its client started beside the server).
SITE_RUNS := 20261127T175154Z-quick 20261127T182348Z-quick
readings: venv
	mkdir -p tmp
	for run in $(HISTORY_RUNS); do \
		$(BIN)/python -m perflab readings --run data/$${run%@*} --commit $${run#*@} || exit 1; done
	for run in $$(sed -n 's/^[a-z]*: *//p' data/reference/reference_runs.yml) $(SITE_RUNS); do \
		$(BIN)/python -m perflab readings --run data/$$run || exit 1; done

# The pooling's coverage by simulation, long (the unit test runs a short version).
SIM_REPS ?= 2000
simulate-pooling: venv
	$(BIN)/python -m perflab.analysis.simulate_pooling --reps $(SIM_REPS)

# JupyterLab on notebooks/, every notebook's parameters set to the run RUN names (absolute:
# a kernel runs in the notebook's folder); figures go to tmp/lab/<run_id>, never reports/.
# On this machine only (127.0.0.1), no browser: open the URL with the token it prints.
LAB_PORT ?= 8888
# Jupyter refuses root unless told; the README's fresh machine may well be root's.
LAB_AS_ROOT = $(if $(filter 0,$(shell id -u)),--allow-root)
lab: export PERFLAB_RUN_DIR = $(abspath $(RUN))
lab: export PERFLAB_REFERENCE_DIR = $(CURDIR)/data/reference
lab: export PERFLAB_OUT_DIR = $(CURDIR)/tmp/lab/$(notdir $(RUN:/=))
lab: run-dir venv
	mkdir -p "$$PERFLAB_OUT_DIR"
	$(BIN)/jupyter lab --no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port=$(LAB_PORT) \
		--ServerApp.port_retries=0 --ServerApp.root_dir=$(CURDIR)/notebooks $(LAB_AS_ROOT)

# The namespaces share this machine's prefix: it is set up here first, then made reachable.
netns-up: venv
	$(BIN)/ansible-playbook -i inventory/localhost.yml $(if $(PERFLAB_HOME),-e perflab_home=$(PERFLAB_HOME)) playbooks/setup.yml
	$(BIN)/ansible-playbook -i inventory/netns.yml $(if $(PERFLAB_HOME),-e perflab_home=$(PERFLAB_HOME)) playbooks/netns_up.yml

netns-down: venv
	$(BIN)/ansible-playbook -i inventory/netns.yml $(if $(PERFLAB_HOME),-e perflab_home=$(PERFLAB_HOME)) playbooks/netns_down.yml

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ansible-lint

# pytest with $(1) as its selection. It exits 5 when it collects nothing: a failure here,
# never a pass (a wrong -m or a broken conftest would otherwise look green).
define pytest_tier
	status=0; $(BIN)/python -m pytest -ra $(1) || status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; \
	exit $$status
endef

# The fast loop: lint and every unit test, nothing provisioned and no process started
# (tests that start one are marked `live`; tests/conftest.py enforces it). Lint and the unit
# tests are independent, so they run side by side, each one's output printed whole.
test-fast: venv
	$(MAKE) --no-print-directory -j2 --output-sync=target lint unit-tests

unit-tests: venv
	$(call pytest_tier,-m "not live")

# The verdict engine's coverage, checked through its real code: every case of
# perflab.analysis.simulation at 10 000 trials (TRIALS=...), and the adaptive looks of
# perflab.analysis.simulate_looks at 10 000, written to data/reference/simulation.json with
# each case's Monte Carlo error.
simulate: venv
	$(BIN)/python -m perflab.analysis.simulation $(TRIALS)
	$(BIN)/python -m perflab.analysis.simulate_looks

# What a look of each cap (2-12 min) would have decided, replayed on the committed quick runs
# that took one (perflab.analysis.look_budget; about 2 min a run): quick's cap rests on it.
LOOK_BUDGET_RUNS := 20261127T012251Z-quick 20261127T044109Z-quick 20261127T082212Z-quick \
	20261127T111956Z-quick 20261127T210549Z-quick 20261128T010419Z-quick \
	20261128T071013Z-quick 20261128T104258Z-quick 20261128T163832Z-quick \
	20261128T205830Z-quick 20261129T041406Z-quick 20261201T230535Z-quick
look-budget: venv
	$(BIN)/python -m perflab look-budget $(addprefix data/,$(LOOK_BUDGET_RUNS)) \
		--out data/experiments/20261202-look-budget/look_budget.json

# Everything: lint first (cheap), then the hosts are set up, because live tests start real
# servers and ghz. PERFLAB_REQUIRE_SETUP=1 turns a missing host prefix into a failure, where
# a plain `pytest` would skip those tests.
test: export PERFLAB_REQUIRE_SETUP := 1
test: lint setup
	$(call pytest_tier,)
