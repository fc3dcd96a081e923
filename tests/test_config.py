"""Run configs: YAML validation, dotted overrides, and errors that name the bad key."""

from __future__ import annotations

import pytest

from expbank.config import ConfigError, dump_config, load_config, valid_keys

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


def test_every_shipped_config_loads():
    from pathlib import Path

    configs = sorted((Path(__file__).resolve().parent.parent / "configs").glob("*.yaml"))
    assert configs
    for path in configs:
        load_config(path)
