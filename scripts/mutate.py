"""Mutation testing: does the suite fail when a plausible one-line bug is made?

Each mutant is one textual replacement in one file (it must match exactly once). For each, the
tree is copied to a temporary folder, the replacement applied there, and the test suite run
(stopping at the first failure); a mutant the suite still passes "survives". A failing test is
run again on its own: if it passes then, it was flaky (timing under load), it is deselected and
the suite run again, so a kill always names a test that fails because of the mutant. The table printed
at the end is the score quoted in the closing notes.

    python scripts/mutate.py                 # every mutant, the whole suite each time
    python scripts/mutate.py --only csv,npz  # mutants whose name contains "csv" or "npz"
    python scripts/mutate.py --list          # names (and any that no longer match the code)
    python scripts/mutate.py --jobs 2        # two mutants at once

The working tree itself is never modified. Outside the engine's numerics on purpose: those are
covered by property tests and the reference fixtures, which killed every numeric mutant tried.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # relative to the repository root
    old: str
    new: str


MUTANTS: list[Mutant] = [
    # filled below, grouped by area
]


def mutant(name: str, path: str, old: str, new: str) -> None:
    MUTANTS.append(Mutant(name, path, old, new))


# ------------------------------------------------------------------ the mutants
# engine/core/attention.py: attend()'s additive_bias (a sign bug there survived) had no caller and was
# removed (dead code hides bugs); the mutant went with it.

# worked arithmetic: the raw score shown where the scaled one belongs (equal only with scaling off)
mutant("explain-text-scaled-is-raw", "engine/analysis/explain.py", "= {num(term.scaled)}{suffix}", "= {num(term.score)}{suffix}")
mutant("explain-term-scaled-is-raw", "engine/analysis/explain.py", "scaled=float(scaled[j]),", "scaled=float(result.scores[head, query, j]),")
mutant("arithmetic-panel-scaled-is-raw", "app/panels/arithmetic_panel.py", "= <b>{number(t.scaled)}</b>{note}", "= <b>{number(t.score)}</b>{note}")
mutant("arithmetic-panel-divisor-sqrt", "app/panels/arithmetic_panel.py", "e.d_k, number(math.sqrt(e.d_k)))", "e.d_k, number(e.d_k))")

# engine/files/export.py: trace files (CSV order, JSON −∞, suffixes) and the MiniLM file's keys
mutant("csv-query-major", "engine/files/export.py",
       "for h, head in enumerate(result.weights):  # (n, n) per head\n            for i, row in enumerate(head):",
       "for i in range(result.n):\n            for h, row in enumerate(result.weights[:, i]):")
mutant("csv-precision", "engine/files/export.py", "[format(w, \".9g\") for w in row.tolist()])\n\n\n_WRITERS", "[format(w, \".4g\") for w in row.tolist()])\n\n\n_WRITERS")
mutant("json-minus-infinity", "engine/files/export.py", 'float("-inf"): "-Infinity"}', 'float("-inf"): "Infinity"}')
mutant("export-suffix-case", "engine/files/export.py", "suffix = Path(path).suffix.lower()", "suffix = Path(path).suffix")
mutant("npz-optional-arrays", "engine/files/export.py", 'OPTIONAL_ARRAYS = ("q_unrotated", "k_unrotated", "mask")', 'OPTIONAL_ARRAYS = ("q_unrotated", "k_unrotated")')
mutant("minilm-npz-key-renamed", "engine/files/export.py", '"token_spans": np.array(spans, dtype=np.int64).reshape(-1, 2),', '"spans": np.array(spans, dtype=np.int64).reshape(-1, 2),')
mutant("minilm-npz-hidden-renamed", "engine/files/export.py", '"hidden_states": trace.hidden_states, "text"', '"hidden": trace.hidden_states, "text"')

# cli/commands.py: exit codes and the image/data decision
mutant("cli-usage-exit-1", "cli/commands.py", "return _fail(error, 2)", "return _fail(error, 1)")
mutant("cli-unknown-command-exit-1", "cli/commands.py", 'f"for the window", 2)', 'f"for the window", 1)')
mutant("export-suffix-lower-dropped", "engine/files/export.py", "    suffix = Path(path).suffix.lower()\n    if suffix not in allowed:", "    suffix = Path(path).suffix\n    if suffix not in allowed:")
mutant("cli-no-scale-ignored", "cli/commands.py", '        settings["scale"] = False', '        pass')

# app/session.py: what a session keeps
mutant("session-drops-embeddings", "app/session.py", 'data.pop("memory_budget", None)', 'data.pop("memory_budget", None); data.pop("embeddings", None)')
mutant("session-view-field-renamed", "app/session.py", '"view": dict(view or {})}', '"state": dict(view or {})}')
mutant("session-stage-not-read", "app/session.py", 'clean["stage"] = stage', 'clean["stage"] = "weights"')
mutant("session-future-version-accepted", "app/session.py", "if version > VERSION:", "if version > VERSION + 1:")

# figures/render.py and the window's export: the picture must show the stage and head it names
mutant("render-stage-ignored", "figures/render.py", "heat.set_matrix(matrices[h],", "heat.set_matrix(result.weights[h],")
mutant("render-one-head-draws-head-0", "figures/render.py", "heat.set_matrix(matrices[h],", "heat.set_matrix(matrices[index],")
mutant("render-levels-of-head-0", "figures/render.py", "levels = (0.0, max(float(bounds[\"weights\"][heads].max()), 1e-6))", "levels = (0.0, max(float(bounds[\"weights\"][0]), 1e-6))")
mutant("window-export-stage-ignored", "app/shell/exports.py", "stage=\"weights\" if words else self.w.controller.stage, width=width,", "stage=\"weights\", width=width,")

# app/controller.py: debounce, stale results, focus clamp (window wiring)
mutant("controller-no-debounce", "app/controller.py", "if immediate or self._last_seconds < FAST_COMPUTE_S or paused:", "if True:")
mutant("lane-stale-shown", "app/worker.py", "return generation == self.generation and not self._worker._stopping",
       "return not self._worker._stopping")
mutant("controller-focus-not-clamped", "app/controller.py", "else min(self.focus, n - 1)", "else self.focus")
mutant("controller-head-not-clamped", "app/controller.py", "self.head = min(self.head, heads - 1)", "self.head = self.head")

# translations: texts left in English in the Chinese window
mutant("tokens-tooltip-untranslated", "app/panels/tokens_panel.py", 'self.model.tooltip = self.tr("#%1 “%2”, characters %3–%4")', 'self.model.tooltip = "#%1 “%2”, characters %3–%4"')
# (menus are built from app/shell/menus.py's table: an item's title is translated where the table is read)
mutant("menu-item-untranslated", "app/shell/menus.py", "    return window_text(command.title)", "    return command.title")

# the window after the rewiring (lanes, panel contract, saved state, sessions, exit)
mutant("panel-accepts-any-model", "app/panels/base.py", "return snapshot is not None and self.supports(model_info(snapshot.model).capabilities)", "return snapshot is not None")
mutant("saved-state-kept", "app/shell/saved_state.py", "            self.w.settings.remove(key)", "            pass")
mutant("session-text-uncapped", "app/shell/sessions.py", "        if len(config.text) > MAX_WINDOW_TEXT:  # the text box", "        if False:  # the text box")
mutant("pool-exit-ignored", "engine/core/parallel.py", "if _exiting:", "if False:")
mutant("window-export-head-0", "app/shell/exports.py", "image = render_image(self.w.controller.snapshot.result, head=self.w.controller.head,", "image = render_image(self.w.controller.snapshot.result, head=0,")

# panels' numbers: compare, head grid, inspector, player, scaling lab, plane (PCA), diffs
mutant("compare-cos-column-swapped", "app/panels/compare_panel.py", "str(row.index_b), _format_cosine(row.cos_static),", "str(row.index_b), _format_cosine(row.cos_contextual),")
mutant("compare-cos-two-digits", "app/panels/compare_panel.py", 'return "—" if math.isnan(value) else f"{value:.4f}"', 'return "—" if math.isnan(value) else f"{value:.2f}"')
mutant("headgrid-selects-wrong", "app/panels/headgrid_panel.py", "view.setBorder(SELECTED_PEN if head == self.controller.head else PLAIN_PEN)", "view.setBorder(SELECTED_PEN if head == 0 else PLAIN_PEN)")
mutant("headgrid-click-off-by-one", "app/panels/headgrid_panel.py", "self.controller.select(head=head)", "self.controller.select(head=head + 1)")
mutant("inspector-scaled-is-dot", "app/panels/inspector_panel.py", '"scaled": (number(c.scaled),', '"scaled": (number(c.dot),')
mutant("inspector-share-not-percent", "app/panels/inspector_panel.py", 'f"{100 * c.share:.4g} %"', 'f"{c.share:.4g} %"')
mutant("player-next-skips", "app/panels/player_panel.py", "self.set_stage(self._stage_index + 1)", "self.set_stage(self._stage_index + 2)")
mutant("player-stage-unclamped", "app/panels/player_panel.py", "index = max(0, min(int(index), len(STAGE_KEYS) - 1))", "index = max(0, min(int(index), len(STAGE_KEYS)))")
mutant("scaling-summary-head-0", "app/panels/scaling_panel.py", 'f"{comparison.entropy_scaled[head].mean():.3f}"', 'f"{comparison.entropy_scaled[0].mean():.3f}"')
mutant("scaling-reference-max", "app/panels/scaling_panel.py", "np.repeat(np.exp(-comparison.uniform), 2)", "np.repeat(np.exp(comparison.uniform), 2)")
mutant("plane-axes-swapped", "app/panels/plane_panel.py", "self.static_scatter.setData(static[:, 0], static[:, 1], data=np.arange(n))", "self.static_scatter.setData(static[:, 1], static[:, 0], data=np.arange(n))")
mutant("plane-variance-one-axis", "app/panels/plane_panel.py", 'n, f"{ratio_1 + ratio_2:.1f}", 2 * n))', 'n, f"{ratio_1:.1f}", 2 * n))')
mutant("diffs-cosine-is-norm", "app/panels/diffs_panel.py", 'f"{result.cosine[focus]:.4f}"', 'f"{float(np.linalg.norm(result.diff[focus])):.4f}"')


# the classes that survived a hand-made mutation run, and the new code's own
mutant("gguf-untied-head-ignored", "engine/models/llama.py",
       "if names.output_head and names.output_head in tensors else embeddings)", "if False else embeddings)")
mutant("smollm2-digits-grouped", "engine/text/bpe.py", '"smollm": (True, _GPT2_REGEX),', '"smollm": (False, _GPT2_REGEX),')
mutant("generate-sample-is-greedy", "engine/analysis/next_token.py", "pick_token(probabilities, greedy=greedy, rng=rng)",
       "pick_token(probabilities, greedy=True, rng=rng)")
mutant("sample-button-greedy", "app/panels/next_token_panel.py", "self.sample_button.clicked.connect(lambda: self.generate(greedy=False))",
       "self.sample_button.clicked.connect(lambda: self.generate(greedy=True))")
mutant("lens-caption-highest-layer", "app/panels/logit_lens_panel.py",
       "first = int(np.argmax(lens.top_ids[:, 0] == final)) if np.any(lens.top_ids[:, 0] == final) else rows - 1",
       "first = int(np.argmax(lens.final_probability))")
mutant("headgrid-toggle-layer-0", "app/panels/headgrid_panel.py",
       "self.controller.toggle_head(0 if snapshot is None else snapshot.layer, head)", "self.controller.toggle_head(0, head)")
mutant("headgrid-ctrl-ignored", "app/panels/headgrid_panel.py", "event.modifiers() & Qt.KeyboardModifier.ControlModifier)",
       "event.modifiers() & Qt.KeyboardModifier.ShiftModifier)")
mutant("headgrid-cross-every-layer", "app/panels/headgrid_panel.py",
       "off = {head for layer, head in snapshot.ablate if layer == snapshot.layer}", "off = {head for layer, head in snapshot.ablate}")
mutant("session-layer-not-read", "app/session.py", 'clean["layer"] = layer', 'clean["layer"] = 0')
mutant("session-pretrained-head-limit", "app/session.py", 'toy = view.get("model", DEFAULT_MODEL) == DEFAULT_MODEL', "toy = True")
# (show_snapshot runs only when a lazily built panel appears: the new result reaches the inspector
# through snapshotChanged, so the bug is there)
mutant("inspector-stale-after-switch", "app/panels/inspector_panel.py",
       "    def on_snapshot_changed(self, snapshot) -> None:\n        self._request_inspection()",
       "    def on_snapshot_changed(self, snapshot) -> None:\n        pass")
mutant("lane-answer-after-shutdown", "app/worker.py", "return generation == self.generation and not self._worker._stopping",
       "return generation == self.generation")
mutant("task-not-interrupted-by-cancel", "app/worker.py", "            self._state._interrupted.set()\n",
       "            pass\n")
mutant("worker-queues-after-shutdown", "app/worker.py", "if self._stopping:\n                return  # no thread will run it",
       "if False:\n                return  # no thread will run it")
mutant("atomic-write-signal-window", "engine/core/safe_io.py", "    held = _hold_signals()\n", "    held = None\n")
mutant("atomic-write-temp-kept", "engine/core/safe_io.py", "        if remove:\n            with contextlib.suppress(OSError):\n                os.unlink(temporary)",
       "        if remove:\n            pass")
# the player's heights by rows, the rollout caption's own-token case
mutant("player-height-ignores-rows", "app/panels/player_panel.py",
       "least = view_height(self._rows, side) if self._rows else MIN_VIEW_HEIGHT", "least = MIN_VIEW_HEIGHT")
mutant("player-height-by-columns", "app/panels/player_panel.py",
       "self._rows = max(spec[\"matrix\"].shape[0] for spec in specs)",
       "self._rows = max(spec[\"matrix\"].shape[1] for spec in specs)")
# the player beside its heatmap, the lab's compact form, the encoder's row-share attention,
# the softmax without the row maximum
mutant("player-beside-never", "app/panels/player_panel.py",
       "        if beside != self._side:", "        beside = False\n        if beside != self._side:")
mutant("lab-never-compact", "app/panels/positional_panel.py", "        if compact != self._compact:", "        compact = (False, False)\n        if compact != self._compact:")
mutant("rollout-caption-own-twice", "app/panels/analysis_panel.py", "        if top == focus:  # its own token", "        if False:  # its own token")

mutant("encoder-hook-rows-at-once", "engine/models/bert.py",
       "rows_edit = edit if edit is not None and not wanted.isdisjoint(ROW_POINTS) else None", "rows_edit = edit")
mutant("encoder-row-attention-first-rows", "engine/models/bert.py",
       "head_outputs_out=head_outputs[:, rows])", "head_outputs_out=head_outputs[:, :rows.stop - rows.start])")
mutant("softmax-unshifted-no-fallback", "engine/core/attention.py",
       "    if not (sums.min() > _SUM_FLOOR and sums.max() < _SUM_CEILING):  # NaN fails too", "    if False:")

# actions declared but never triggered: a menu row wired to the wrong way, a history that keeps a redo
mutant("menu-previous-head-goes-next", "app/shell/menus.py", "w.navigation.step_head(-1)", "w.navigation.step_head(1)")
mutant("redo-survives-a-new-change", "app/controller.py", "        self._redo.clear()\n", "        pass\n")
# interactions never combined: the ablation's hook after the user's on the same hook_z
mutant("ablation-hook-after-the-users", "engine/core/hooks.py", "zero_heads(heads), first=True)", "zero_heads(heads), first=False)")
# fixtures of one format only: a sharded index naming a file outside its folder; one id past the embedding
mutant("shard-outside-the-folder", "engine/models/safetensors_file.py",
       "Path(shard).name != shard or ", "")
mutant("tokenizer-id-one-past", "engine/models/hf_folder.py", "    if top >= vocab:", "    if top > vocab:")
# the layer batches rerun only the plain block: claimed for every decoder
mutant("layer-batches-for-every-block", "engine/models/decoder.py", "layer_batches=c.plain_block", "layer_batches=True")
# tolerances that cannot fail: a head cell that patches every head of its layer moves p(answer) by
# 0.5–110 % of cells near 1e-4 (inside an absolute 1e-3) and the logit difference by up to 0.78
mutant("patch-head-cell-every-head", "engine/analysis/patching.py",
       "        z[:, head] = source[:, head]", "        z[:] = source")
# exports checked by count, not content: the GIF's timing, the PDF's tables, the player after an export
mutant("gif-frame-milliseconds-as-seconds", "figures/steps.py", "duration=int(seconds * 1000)", "duration=int(seconds)")
mutant("pdf-table-transposed", "figures/steps.py", "    for row in matrix:", "    for row in matrix.T:")
mutant("pdf-pages-reversed", "figures/steps.py", "        for index, page in enumerate(pages):",
       "        for index, page in enumerate(pages[::-1]):")
mutant("step-export-rewinds-the-player", "app/shell/exports.py", "        player = self.w.navigation.show_player()\n",
       "        player = self.w.navigation.show_player()\n        player.set_stage(0)\n")
# fixtures of one format only (the older config.json form: a top-level rope_theta, no num_key_value_heads)
mutant("rope-base-from-the-new-key-only", "engine/models/families/rotary.py",
       'theta = tables[FULL].get("rope_theta", c.get("rope_theta", 10000.0))', 'theta = tables[FULL].get("rope_theta", 10000.0)')
mutant("kv-heads-default-one", "engine/models/families/common.py",
       "default = heads if kv_default is None else kv_default", "default = 1 if kv_default is None else kv_default")
# ... and a GGUF file over the memory budget listed as one that opens
mutant("gguf-over-the-budget-listed", "engine/models/local_models.py",
       'problem = "" if 4 * numbers <= limit else', 'problem = "" if True else')
# actions declared but never triggered: "Export all heads" writing the selected head; a click on the
# patching head map opening a token instead of the head
mutant("export-all-heads-writes-one", "app/shell/exports.py",
       'self.export_heatmap(path, "all" if all_heads else self.w.controller.head, width)',
       "self.export_heatmap(path, self.w.controller.head, width)")
mutant("patch-head-click-selects-a-token", "app/panels/evidence_panel.py",
       "        self._open(layer, head=head)", "        self._open(layer, focus=head)")
# interactions never combined: a corrupted run whose most likely token is the answer (the logit
# difference's other token must be the next one, not the answer itself)
mutant("patch-other-may-be-the-answer", "engine/analysis/patching.py",
       "other = int(ranked[0] if ranked[0] != target.id else ranked[1])", "other = int(ranked[0])")
# exports checked by count, not content: the GIF's frames in reverse order
mutant("gif-frames-reversed", "figures/steps.py",
       "MEDIANCUT) for frame in frames]", "MEDIANCUT) for frame in frames[::-1]]")
# exercises switched quickly: the previous exercise's answer kept (and revealable) while the next computes
mutant("exercise-switch-keeps-the-answer", "app/lesson_dialog.py",
       "        self.solution = self.verdict = None\n        self.question.setText", "        self.verdict = None\n        self.question.setText")
# ... and the verdict of the exercise just left (its answer's numbers) still shown over the next one
mutant("exercise-switch-keeps-the-verdict", "app/lesson_dialog.py", "        self.feedback.clear()\n", "")


def _copy_tree(destination: Path) -> None:
    """The tracked and untracked-but-not-ignored files, as they are now (no .venv, no .git)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout.split(b"\0")
    for raw in listed:
        if not raw:
            continue
        relative = raw.decode()
        source = ROOT / relative
        if not source.is_file():
            continue
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def run_one(item: Mutant, python: str, timeout: float, pytest_args: list[str]) -> tuple[str, float, str]:
    """("killed" | "survived" | "stale" | "timeout", seconds, the first failing test or reason)."""
    with tempfile.TemporaryDirectory(prefix="mutant-") as folder:
        tree = Path(folder)
        _copy_tree(tree)
        target = tree / item.path
        if not target.is_file():
            return "stale", 0.0, f"{item.path} does not exist"
        text = target.read_text(encoding="utf-8")
        count = text.count(item.old)
        if count != 1:
            return "stale", 0.0, f"the original line occurs {count} times"
        target.write_text(text.replace(item.old, item.new), encoding="utf-8")
        started = time.monotonic()
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", QT_QPA_PLATFORM="offscreen")
        flaky: list[str] = []  # tests that failed once but passed when run again alone
        while True:
            deselected = [arg for node in flaky for arg in ("--deselect", node)]
            try:
                completed = subprocess.run(
                    [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *pytest_args, *deselected],
                    cwd=tree, env=env, capture_output=True, text=True, timeout=timeout,
                )
            except subprocess.TimeoutExpired:
                return "timeout", time.monotonic() - started, "the suite did not finish (counts as killed)"
            seconds = time.monotonic() - started
            note = f" (flaky, passed alone: {', '.join(flaky)})" if flaky else ""
            if completed.returncode == 0:
                return "survived", seconds, note.strip()
            failed = [line for line in completed.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
            if not failed:
                return "killed", seconds, completed.stdout.strip().splitlines()[-1][:120]
            node = failed[0].split(" ", 1)[1].split(" - ", 1)[0]
            # a machine under load fails timing-sensitive tests now and then: a kill counts only
            # if the failing test fails again on its own
            again = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", node],
                                   cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
            if again.returncode != 0 or len(flaky) >= 3:
                return "killed", time.monotonic() - started, (failed[0] + note)[:160]
            flaky.append(node)
            why = next((line for line in completed.stdout.splitlines() if line.startswith("E ")), "")
            print(f"  flaky under load: {node}: {why.strip()[:200]}", file=sys.stderr, flush=True)  # to fix it


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the mutants whose name contains this (a,b: either)")
    parser.add_argument("--list", action="store_true", help="print the mutants' names and exit")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs the suite")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once (each in its own copy)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant")
    parser.add_argument("pytest_args", nargs="*", help="passed to pytest (e.g. a test file)")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if any(part in m.name for part in args.only.split(","))]
    if args.list:
        for item in chosen:
            text = (ROOT / item.path).read_text(encoding="utf-8") if (ROOT / item.path).is_file() else ""
            matches = text.count(item.old)
            print(f"{item.name:40} {item.path}" + ("" if matches == 1 else f"  (stale: matches {matches} times)"))
        return 0
    done = 0

    def run(item: Mutant):
        nonlocal done
        outcome, seconds, detail = run_one(item, args.python, args.timeout, args.pytest_args)
        done += 1
        print(f"[{done}/{len(chosen)}] {outcome:8} {seconds:6.1f} s  {item.name}  {detail}", flush=True)
        return item, outcome, seconds, detail

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:  # each job is a subprocess
        rows = list(pool.map(run, chosen))
    counts = {key: sum(1 for row in rows if row[1] == key) for key in ("killed", "timeout", "survived", "stale")}
    valid = len(rows) - counts["stale"]
    score = (counts["killed"] + counts["timeout"]) / valid if valid else 0.0
    print()
    print(f"{'mutant':40} {'outcome':9} caught by")
    for item, outcome, _, detail in rows:
        print(f"{item.name:40} {outcome:9} {detail}")
    print()
    print(f"mutants: {len(rows)}  killed: {counts['killed'] + counts['timeout']}  survived: {counts['survived']}  "
          f"stale: {counts['stale']}  score: {score:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
