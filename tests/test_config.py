"""Run configs: YAML validation, dotted overrides, and errors that name the bad key."""

from __future__ import annotations

import copy
import importlib.util
import json
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from expbank.config import RENAMED_KEYS, ConfigError, dump_config, load_config, set_dotted, valid_keys
from expbank.errors import UserError

ROOT = Path(__file__).resolve().parent.parent

DESIGN_VOCABULARY = """env.name env.split env.data_dir env.max_steps panel.task_ids panel.limit panel.seeds
actor.backend actor.model actor.adapter actor.base_url actor.api_key_env memory.mode memory.retrieval
memory.reconstruct memory.k memory.bank decoding.temperature decoding.max_new_tokens reward.outcome_scale
reward.format_weight reward.invalid_penalty select.split report.splits run.dir run.seed""".split()


def test_every_design_key_is_accepted():
    assert set(DESIGN_VOCABULARY) <= set(valid_keys())


def test_yaml_and_overrides(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("env:\n  name: webshop\n  split: test\nmemory:\n  mode: bank\n  k: 3\n")
    config = load_config(path, ["memory.k=5", "panel.seeds=[0, 1, 2]", "memory.reconstruct=false"])
    assert config.env.name == "webshop" and config.memory.mode == "bank"
    assert config.memory.k == 5 and config.panel.seeds == [0, 1, 2] and config.memory.reconstruct is False
    dump_config(config, tmp_path / "resolved.yaml")
    assert load_config(tmp_path / "resolved.yaml") == config


@pytest.mark.parametrize(("override", "message"), [
    ("memory.kk=3", "unknown key 'memory.kk'; did you mean 'memory.k'"),
    ("memroy.mode=bank", "unknown key 'memroy.mode'; did you mean 'memory.mode'"),
    ("decoding.temprature=0.7", "did you mean 'decoding.temperature'"),
    ("memory.mode=everything", "bad value for 'memory.mode'"),
    ("memory.k=0", "bad value for 'memory.k'"),
    ("memory.k", "not of the form key=value"),
])
def test_bad_overrides_name_the_key(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, [override])


def test_bad_files(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("env: [unclosed\n")
    with pytest.raises(ConfigError, match="bad.yaml: not valid YAML"):
        load_config(bad)
    typo = tmp_path / "typo.yaml"
    typo.write_text("actor:\n  modle: gpt\n")
    with pytest.raises(ConfigError, match=r"typo.yaml: unknown key 'actor.modle'; did you mean 'actor.model'"):
        load_config(typo)


def test_every_shipped_config_loads_without_old_keys(caplog):
    configs = sorted(p for p in (ROOT / "configs").rglob("*.yaml") if p.parent.name != "accelerate")
    assert configs
    with caplog.at_level(logging.WARNING, logger="expbank.config"):
        for path in configs:
            load_config(path)
    assert not caplog.records


# ------------------------------------------------------------------------ descriptions and the reference doc
def _reference_script():
    spec = importlib.util.spec_from_file_location("config_reference", ROOT / "scripts" / "config_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_key_has_a_description():
    reference = _reference_script()
    undescribed = {key for key, _, description in reference.key_rows() if not description}
    assert not undescribed, "describe every key in its Field(description=...)"


def test_the_config_reference_is_generated_from_the_schema():
    reference = _reference_script()
    doc = reference.DOC.read_text()
    assert reference.render(doc) == doc, "docs/config-reference.md is stale: run scripts/config_reference.py --write"


# ------------------------------------------------------------------------------------------ renamed keys
# a value other than the default for every old key, so that a rename which lost a value would show
OLD_VALUES: dict[str, Any] = {
    "train.lora": False, "train.lora_r": 8, "train.lora_alpha": 4, "train.lora_dropout": 0.1,
    "train.lora_target_modules": ["q_proj"], "train.checkpoint_every": 2, "train.keep_checkpoints": 3,
    "train.eval_every": 5, "train.eval_tasks": 7, "train.bank_update_every": 3,
    "train.bank_episodes_per_group": 4, "train.bank_summariser": "llm", "train.bank_summariser_model": "m",
    "train.bank_summariser_base_url": "http://x:1", "train.prune_every": 9, "train.prune_min_uses": 2, "train.prune_threshold": 0.5, "train.bank_capacity": 50,
    "train.vllm_gpu_memory_utilization": 0.6,
}


def _tree(values: dict[str, Any]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for key, value in values.items():
        set_dotted(tree, key, value)
    return tree


def _deprecations(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "is deprecated" in r.getMessage()]


def _assert_warned_once_per_old_key(caplog, source: str) -> None:
    messages = _deprecations(caplog)
    assert len(messages) == len(RENAMED_KEYS)
    for old, new in RENAMED_KEYS.items():
        assert sum(f"{source}: {old} is deprecated; use {new} (" in m for m in messages) == 1, old


def test_old_keys_in_a_file_and_in_overrides_load_as_the_new_keys_and_warn_once(tmp_path, caplog):
    assert set(OLD_VALUES) == set(RENAMED_KEYS)  # every rename is exercised
    new = tmp_path / "new.yaml"
    new.write_text(yaml.safe_dump(_tree({RENAMED_KEYS[k]: v for k, v in OLD_VALUES.items()})))
    with caplog.at_level(logging.WARNING, logger="expbank.config"):
        expected = load_config(new)
    assert not _deprecations(caplog)
    assert expected.train.lora.enabled is False and expected.train.lora.r == 8 and expected.select.every == 5
    assert expected.train.bank.capacity == 50 and expected.train.vllm.gpu_memory_utilization == 0.6

    old = tmp_path / "old.yaml"
    old.write_text(yaml.safe_dump(_tree(OLD_VALUES)))
    assert yaml.safe_load(old.read_text())["train"]["lora"] is False  # the old flat layout
    with caplog.at_level(logging.WARNING, logger="expbank.config"):
        assert load_config(old) == expected
    _assert_warned_once_per_old_key(caplog, str(old))

    caplog.clear()
    overrides = [f"{key}={json.dumps(value)}" for key, value in OLD_VALUES.items()]
    with caplog.at_level(logging.WARNING, logger="expbank.config"):
        assert load_config(None, overrides) == expected
    _assert_warned_once_per_old_key(caplog, "<overrides>")


def test_the_old_lora_switch_still_works(tmp_path):
    assert load_config(None, ["train.lora=false"]).train.lora.enabled is False
    path = tmp_path / "c.yaml"
    path.write_text("train:\n  lora:\n    r: 32\n")
    config = load_config(path, ["train.lora=false", "train.lora_alpha=8"])  # old overrides on a new-style file
    assert (config.train.lora.enabled, config.train.lora.r, config.train.lora.alpha) == (False, 32, 8)
    path.write_text("train:\n  lora: false\n  lora_r: 4\n")
    config = load_config(path, ["train.lora.r=2"])  # a new override on an old-style file wins
    assert (config.train.lora.enabled, config.train.lora.r) == (False, 2)


@pytest.mark.parametrize(("override", "message"), [
    ("train.lora_rank=8", "unknown key 'train.lora_rank'; did you mean 'train.lora.r'"),
    ("train.keep_checkpoint=2", "did you mean 'train.checkpoint.keep'"),
    ("train.bank_capacityy=3", "did you mean 'train.bank.capacity'"),
    ("select.evry=2", "did you mean 'select.every'"),
    ("train.lora.enable=false", "did you mean 'train.lora.enabled'"),
])
def test_unknown_keys_suggest_the_new_names(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, [override])


def test_an_old_and_a_new_name_of_one_key_are_refused(tmp_path):
    path = tmp_path / "both.yaml"
    path.write_text("train:\n  lora_r: 4\n  lora:\n    r: 8\n")
    with pytest.raises(ConfigError, match=r"both.yaml: 'train.lora_r' and 'train.lora.r' are both set"):
        load_config(path)


def test_the_llm_summariser_without_a_server_is_one_line_naming_both_keys():
    with pytest.raises(ConfigError, match=r"^<overrides>: train.bank.summariser=llm needs "
                                          r"train.bank.summariser_base_url \(an OpenAI"):
        load_config(None, ["train.bank.summariser=llm"])


def _old_layout(tree: dict[str, Any]) -> dict[str, Any]:
    """A resolved config as a run directory recorded it before the rename (a flat ``train:``)."""
    tree = copy.deepcopy(tree)
    for old, new in reversed(RENAMED_KEYS.items()):  # train.lora.enabled last: it becomes the bool train.lora
        *sections, leaf = new.split(".")
        parents = [tree]
        for name in sections:
            parents.append(parents[-1][name])
        value = parents[-1].pop(leaf)
        if not parents[-1]:  # a section left empty (train.vllm, train.lora, ...) goes too
            del parents[-2][sections[-1]]
        set_dotted(tree, old, value)
    return tree


def test_a_run_directory_recorded_with_old_keys_resumes(tmp_path, caplog):
    from expbank.training.runs import prepare_run_dir

    config = load_config(ROOT / "configs" / "gpu" / "alfworld-qwen1.5b-lora.yaml")
    recorded = _old_layout(config.model_dump(mode="json"))
    assert recorded["train"]["lora"] is True and recorded["train"]["eval_every"] == 10  # what old code wrote
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text(yaml.safe_dump(recorded, sort_keys=False))

    with caplog.at_level(logging.WARNING, logger="expbank.config"):
        assert prepare_run_dir(run_dir, config) == run_dir  # same settings under new names: it resumes
    assert any(f"{run_dir / 'config.yaml'}: train.lora_r is deprecated" in m for m in _deprecations(caplog))
    assert yaml.safe_load((run_dir / "config.yaml").read_text()) == recorded  # resuming rewrites nothing

    changed = config.model_copy(deep=True)
    changed.select.every = 5
    with pytest.raises(UserError, match=r"different config \(select.every\)"):
        prepare_run_dir(run_dir, changed)
