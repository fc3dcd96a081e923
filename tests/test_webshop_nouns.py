"""The type reward's noun source: spaCy pipelines found through spaCy's registry, loaded with the parser,
recorded in the fingerprint; official data refuses the fallback rule unless asked to allow it; a catalog's
title nouns are tagged once and read back from the cache by every later environment."""

from __future__ import annotations

import importlib.metadata
import json

import pytest
from webshop_data import DEODORANT, write_official_dir

from expbank import envs
from expbank.envs.errors import EnvDataError
from expbank.envs.webshop import env as webshop_env
from expbank.envs.webshop import reward, titles
from expbank.envs.webshop.catalog import load_catalog
from expbank.envs.webshop.reward import (
    FALLBACK,
    english_pipelines,
    noun_source,
    noun_source_fingerprint,
    nouns,
)

INSTALLED = english_pipelines()
needs_pipeline = pytest.mark.skipif(not INSTALLED, reason="no English spaCy pipeline installed")


@pytest.fixture(autouse=True)
def fresh_detection():
    """``noun_source()`` caches what it found; tests that change what is installed start and end afresh."""
    noun_source.cache_clear()
    yield
    noun_source.cache_clear()


def install_fake_pipeline(root, package: str, lang: str, pipeline: list[str], version: str = "1.0.0") -> None:
    """What ``pip install`` leaves for a spaCy pipeline package: the package with its meta.json, and a
    dist-info that registers it as a ``spacy_models`` entry point."""
    (root / package).mkdir()
    (root / package / "__init__.py").write_text("")
    meta = {"lang": lang, "name": package, "version": version, "pipeline": pipeline}
    (root / package / "meta.json").write_text(json.dumps(meta))
    info = root / f"{package}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[spacy_models]\n{package} = {package}\n")


def test_pipelines_are_found_by_spacys_registry_under_any_name(tmp_path, monkeypatch):
    install_fake_pipeline(tmp_path, "acme_shop_tagger", "en", ["tok2vec", "tagger", "parser"], "2.1.0")
    install_fake_pipeline(tmp_path, "zz_core_web_sm_copy", "en", ["tok2vec", "tagger"])
    install_fake_pipeline(tmp_path, "acme_german", "de", ["tok2vec", "tagger"])
    install_fake_pipeline(tmp_path, "acme_ner_only", "en", ["tok2vec", "ner"])
    monkeypatch.syspath_prepend(str(tmp_path))
    found = english_pipelines()
    assert {"acme_shop_tagger", "zz_core_web_sm_copy"} <= set(found)
    assert not {"acme_german", "acme_ner_only"} & set(found)  # not English; no POS tagger
    assert "core_web_sm" in found[0]  # the original's en_core_web_sm kind comes first, whatever its name
    assert noun_source("acme_shop_tagger") == "spacy:acme_shop_tagger"
    record = noun_source_fingerprint("spacy:acme_shop_tagger")
    assert (record["source"], record["version"]) == ("spacy:acme_shop_tagger", "2.1.0")
    with pytest.raises(EnvDataError, match="'acme_german' is a 'de' pipeline"):
        noun_source("acme_german")
    with pytest.raises(EnvDataError, match="'acme_ner_only' has no POS tagger"):
        noun_source("acme_ner_only")
    with pytest.raises(EnvDataError, match="neither an installed spaCy pipeline package nor a pipeline folder"):
        noun_source("acme_missing.pipeline")


@needs_pipeline
def test_an_installed_pipeline_is_the_default_and_is_recorded():
    assert noun_source() == f"spacy:{INSTALLED[0]}"
    env = envs.make("webshop", split="test")
    _, info = env.reset(options={"task_id": "0"})
    record = env.env_fingerprint()["nouns"]
    assert info["nouns"] == env.nouns == record["source"] == noun_source()
    assert record["version"] and record["spacy"] == importlib.metadata.version("spacy")
    assert record["allow_fallback"] is False


@needs_pipeline
def test_tags_are_the_full_pipelines_and_a_folder_loads_like_its_package(tmp_path):
    """The parser stays (it changes tags); only the lemmatizer and the entity recognizer are skipped."""
    import spacy

    full = spacy.load(INSTALLED[0])
    catalog = load_catalog(None, "small", True)
    names = list(dict.fromkeys(p["name"] for p in catalog.products))
    source = f"spacy:{INSTALLED[0]}"
    expected = [tuple(t.text.lower() for t in full(title) if t.pos_ in reward.NOUN_TAGS) for title in names]
    assert [nouns(title, source) for title in names] == expected
    assert list(reward.nouns_in_batches(names, source)) == expected  # tagged in batches: the same tags
    assert titles.title_nouns(catalog, source) == dict(zip(names, expected, strict=True))
    assert any(expected) and not any({"and", "for", "with"} & set(found) for found in expected)
    full.to_disk(tmp_path / "pipeline")
    folder = noun_source(str(tmp_path / "pipeline"))
    assert folder == f"spacy:{tmp_path / 'pipeline'}"
    assert [nouns(title, folder) for title in names[:10]] == expected[:10]


def test_official_data_without_a_pipeline_refuses_to_start_unless_allowed(tmp_path, monkeypatch):
    """A machine without any English pipeline: spaCy's registry lists no ``spacy_models``."""
    listed = importlib.metadata.entry_points
    monkeypatch.setattr(
        importlib.metadata,
        "entry_points",
        lambda *args, **kw: [] if kw.get("group") == "spacy_models" else listed(*args, **kw),
    )
    assert noun_source() == FALLBACK
    data_dir = str(write_official_dir(tmp_path / "official"))
    with pytest.raises(EnvDataError) as refused:
        envs.make("webshop", split="test", data_dir=data_dir)
    message = str(refused.value)
    assert "\n" not in message and "spacy download en_core_web_sm" in message
    assert "spacy_model" in message and "allow_fallback_nouns" in message
    env = envs.make("webshop", split="test", data_dir=data_dir, allow_fallback_nouns=True)
    assert env.env_fingerprint()["nouns"] == {"source": FALLBACK, "allow_fallback": True}
    assert env.title_nouns == {}  # the fallback rule tags a title in microseconds: nothing is tagged ahead
    assert envs.make("webshop", split="test").nouns == FALLBACK  # the bundled catalog plays without asking


class CountingPipeline:
    """A real spaCy pipeline that counts the texts it is given, one by one or in batches."""

    def __init__(self, nlp):
        self.nlp, self.texts = nlp, 0

    def __call__(self, text):
        self.texts += 1
        return self.nlp(text)

    def pipe(self, texts, **options):
        texts = list(texts)
        self.texts += len(texts)
        return self.nlp.pipe(texts, **options)


@needs_pipeline
def test_title_nouns_are_tagged_once_and_a_second_env_reads_them_back(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPBANK_CACHE", str(tmp_path / "cache"))
    source = f"spacy:{INSTALLED[0]}"
    counting = CountingPipeline(reward._pipeline(source))
    monkeypatch.setattr(reward, "_pipeline", lambda _: counting)
    reward.nouns.cache_clear()  # so that a title not looked up would reach the pipeline
    data_dir = str(write_official_dir(tmp_path / "official"))
    first = envs.make("webshop", split="test", data_dir=data_dir)
    catalog = first.catalog
    names = {p["name"] for p in catalog.products}
    assert counting.texts == len(names) and set(first.title_nouns) == names
    saved = titles.cache_path(catalog.file_hashes[catalog.items_file], source)
    assert saved.is_file() and saved.parent.parent == tmp_path / "cache"

    webshop_env._title_nouns.cache_clear()  # what a new worker process starts with
    second = envs.make("webshop", split="test", data_dir=data_dir)
    assert second.title_nouns == first.title_nouns and second.title_nouns is not first.title_nouns
    task_id = next(str(i) for i, goal in enumerate(second.goals) if goal["asin"] == DEODORANT)
    second.reset(options={"task_id": task_id})
    for action in ("search[deodorant stick]", f"click[{DEODORANT.lower()}]", "click[navy blue]"):
        second.step(action)
    second.step("click[2 ounce]")
    *_, info = second.step("click[buy now]")
    assert info["score"] == 1.0 and info["reward_info"]["title_score"] == 1.0
    assert counting.texts == len(names)  # neither the second catalog load nor the purchase tagged a title


def test_the_cache_key_follows_the_pipeline_and_spacys_versions(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPBANK_CACHE", str(tmp_path / "cache"))
    install_fake_pipeline(tmp_path, "acme_shop_tagger", "en", ["tok2vec", "tagger"], "2.1.0")
    monkeypatch.syspath_prepend(str(tmp_path))
    source, items_hash = "spacy:acme_shop_tagger", "0123456789abcdef"
    first = titles.cache_path(items_hash, source)
    assert first.parent == tmp_path / "cache" / "webshop-nouns"
    assert first.name.startswith(f"{items_hash}-acme_shop_tagger-2.1.0-spacy")
    assert titles.cache_path("fedcba9876543210", source) != first  # another product file
    meta = json.loads((tmp_path / "acme_shop_tagger" / "meta.json").read_text())
    (tmp_path / "acme_shop_tagger" / "meta.json").write_text(json.dumps({**meta, "version": "2.2.0"}))
    upgraded = titles.cache_path(items_hash, source)
    assert upgraded != first and "-2.2.0-" in upgraded.name
    version = importlib.metadata.version
    monkeypatch.setattr(
        importlib.metadata, "version", lambda name: "9.9.9" if name == "spacy" else version(name)
    )
    new_spacy = titles.cache_path(items_hash, source)
    assert new_spacy != upgraded and "-spacy9.9.9-" in new_spacy.name
    folders = [tmp_path / "a" / "acme_shop_tagger", tmp_path / "b" / "acme_shop_tagger"]
    for folder in folders:  # two pipeline folders of one name and version: told apart by their paths
        folder.mkdir(parents=True)
        (folder / "meta.json").write_text(json.dumps(meta))
    by_folder = {titles.cache_path(items_hash, f"spacy:{folder}") for folder in folders}
    assert len(by_folder) == 2
    assert all(p.name.startswith(f"{items_hash}-acme_shop_tagger-") for p in by_folder)
