"""Building a provider: keys, URLs and settings are judged before anything is sent."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from provider_cases import MODELS, SECRET, make_request
from wire_server import WireServer, json_reply

import footprint_lab.errors as errors
from footprint_lab import Agent
from footprint_lab.base.refusal import Refusal, RunFailure
from footprint_lab.providers import (
    AnthropicProvider,
    OllamaProvider,
    OpenAIProvider,
    anthropic,
    ollama,
    openai,
    provider_from_string,
)
from footprint_lab.providers.errors import MissingApiKeyError, ProviderConfigError, ProviderError

HOSTED = [("openai", openai, "OPENAI_API_KEY"), ("anthropic", anthropic, "ANTHROPIC_API_KEY")]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OLLAMA_HOST",
                 "OLLAMA_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(("kind", "factory", "env_var"), HOSTED)
def test_a_hosted_provider_without_a_key_is_refused_when_built(kind: str, factory: Any, env_var: str) -> None:
    with pytest.raises(MissingApiKeyError) as caught:
        factory(MODELS[kind])
    error = caught.value
    assert (error.code, error.env_var, error.provider, error.retryable) == (
        "ERR_PROVIDER_MISSING_KEY", env_var, kind, False)
    assert env_var in str(error) and "api_key=" in str(error)


@pytest.mark.parametrize(("kind", "factory", "env_var"), HOSTED)
async def test_the_key_and_url_are_read_from_the_environment(monkeypatch: pytest.MonkeyPatch, server: WireServer,
                                                             kind: str, factory: Any, env_var: str) -> None:
    monkeypatch.setenv(env_var, SECRET)
    monkeypatch.setenv(f"{kind.upper()}_BASE_URL", server.url)
    server.queue(json_reply(f"{kind}_reply.json"))
    provider = factory(MODELS[kind], stream=False)
    await provider.complete(make_request())
    await provider.aclose()
    sent = server.received[0].headers
    assert sent.get("authorization") == f"Bearer {SECRET}" or sent.get("x-api-key") == SECRET
    assert SECRET not in repr(provider)


@pytest.mark.parametrize("given_as", ["argument", "environment"])
async def test_a_server_of_ones_own_needs_no_key(monkeypatch: pytest.MonkeyPatch, server: WireServer,
                                                 given_as: str) -> None:
    server.queue(json_reply("openai_reply.json"))
    if given_as == "environment":
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        provider = openai("llama3.2", stream=False)
    else:
        provider = openai("llama3.2", base_url=server.url, stream=False)
    reply = await provider.complete(make_request())
    await provider.aclose()
    assert reply.content == "Paris is the capital of France."
    assert "authorization" not in server.received[0].headers


async def test_ollama_host_without_a_scheme_is_understood(monkeypatch: pytest.MonkeyPatch, server: WireServer) -> None:
    monkeypatch.setenv("OLLAMA_HOST", server.url.removeprefix("http://"))
    server.queue(json_reply("ollama_reply.json"))
    provider = ollama("llama3.2", stream=False)
    assert provider.base_url == server.url
    await provider.complete(make_request())
    await provider.aclose()
    assert server.received[0].path == "/api/chat"


def test_ollama_defaults_to_the_local_server() -> None:
    assert ollama("llama3.2").base_url == "http://localhost:11434"


@pytest.mark.parametrize(("settings", "setting"), [
    ({"model": ""}, "model"),
    ({"model": None}, "model"),
    ({"base_url": "localhost:11434"}, "base_url"),
    ({"base_url": 11434}, "base_url"),
    ({"timeout": 0}, "timeout"),
    ({"timeout": "60"}, "timeout"),
    ({"max_retries": -1}, "max_retries"),
    ({"max_retries": 1.5}, "max_retries"),
    ({"max_connections": 0}, "max_connections"),
    ({"stream": "yes"}, "stream"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"options": {"messages": []}}, "options"),
    ({"options": {"temperature": object()}}, "options"),
    ({"options": ["temperature"]}, "options"),
    ({"headers": {"x-team": 7}}, "headers"),
    ({"api_key": 12345}, "api_key"),
])
def test_unusable_settings_are_refused_by_name(settings: dict[str, Any], setting: str) -> None:
    arguments: dict[str, Any] = {"model": "gpt-4o-mini", "api_key": SECRET, **settings}
    with pytest.raises(ProviderConfigError) as caught:
        OpenAIProvider(**arguments)
    assert caught.value.setting == setting and caught.value.code == "ERR_PROVIDER_CONFIG"
    assert SECRET not in str(caught.value)


def test_anthropic_owns_max_tokens() -> None:
    with pytest.raises(ProviderConfigError):
        anthropic("claude-sonnet-4-5", api_key=SECRET, options={"max_tokens": 10})
    assert anthropic("claude-sonnet-4-5", api_key=SECRET, max_tokens=10).max_tokens == 10


@pytest.mark.parametrize(("spec", "cls", "model"), [
    ("openai:gpt-4o-mini", OpenAIProvider, "gpt-4o-mini"),
    ("anthropic:claude-sonnet-4-5", AnthropicProvider, "claude-sonnet-4-5"),
    ("ollama:llama3.2:3b", OllamaProvider, "llama3.2:3b"),
    ("Ollama: qwen3 ", OllamaProvider, "qwen3"),
])
def test_provider_from_string(spec: str, cls: type, model: str) -> None:
    provider = provider_from_string(spec, api_key=SECRET, base_url="http://127.0.0.1:9")
    assert isinstance(provider, cls) and provider.model == model


@pytest.mark.parametrize("spec", ["gpt-4o-mini", "openia:gpt-4o", "openai:", "openai:  ", 42])
def test_provider_from_string_refuses_what_it_cannot_read(spec: Any) -> None:
    with pytest.raises(ProviderConfigError) as caught:
        provider_from_string(spec)
    assert "'provider:model'" in str(caught.value)


def test_provider_from_string_passes_the_key_check_through() -> None:
    with pytest.raises(MissingApiKeyError):
        provider_from_string("anthropic:claude-sonnet-4-5")


def test_an_agent_takes_the_model_from_its_provider() -> None:
    provider = ollama("llama3.2")
    assert Agent(provider=provider).model == "llama3.2"
    assert Agent(provider=provider, model="qwen3").model == "qwen3"


async def test_the_model_a_run_names_is_the_model_sent(server: WireServer) -> None:
    server.queue(json_reply("ollama_reply.json"))
    provider = ollama("llama3.2", base_url=server.url, stream=False)
    await provider.complete(make_request(model="qwen3"))
    await provider.aclose()
    assert server.received[0].body["model"] == "qwen3"


# -- the error family -------------------------------------------------------------------------
PROVIDER_ERRORS = [cls for cls in (getattr(errors, name) for name in errors.__all__)
                   if inspect.isclass(cls) and issubclass(cls, ProviderError)]


def test_every_provider_error_is_registered_with_its_own_code_under_the_root_that_tells_the_truth() -> None:
    assert len(PROVIDER_ERRORS) == 13  # the eleven of the wires, their base, and the replay's mismatch
    codes = [cls.code for cls in PROVIDER_ERRORS]
    assert len(set(codes)) == len(codes)
    for cls in PROVIDER_ERRORS:
        assert cls.__name__ in errors.__all__
        assert cls.code.startswith("ERR_PROVIDER") and cls.__doc__
    # built wrong, nothing sent: refused; a call that was made and failed: a failure while running
    refused = {cls.__name__ for cls in PROVIDER_ERRORS if issubclass(cls, Refusal)}
    failed = {cls.__name__ for cls in PROVIDER_ERRORS if issubclass(cls, RunFailure)}
    assert refused == {"MissingApiKeyError", "ProviderConfigError"}
    assert failed == {cls.__name__ for cls in PROVIDER_ERRORS} - refused - {"ProviderError"}


@pytest.mark.parametrize(("name", "retryable"), [
    ("ProviderAuthError", False), ("ModelNotFoundError", False), ("ContextWindowError", False),
    ("ProviderRequestError", False), ("MissingApiKeyError", False), ("ProviderConfigError", False),
    ("ProviderRateLimitError", True), ("ProviderUnavailableError", True), ("ProviderTimeoutError", True),
    ("ProviderConnectionError", True),
])
def test_retryable_says_whether_calling_again_can_help(name: str, retryable: bool) -> None:
    assert getattr(errors, name).retryable is retryable


def test_the_providers_package_names_resolve_and_stay_light_until_used() -> None:
    import subprocess
    import sys

    import footprint_lab.providers as providers

    for name in providers.__all__:
        assert getattr(providers, name) is not None
    code = ("import sys, footprint_lab.errors, footprint_lab.providers; from footprint_lab import Agent; "
            "print('httpx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_half_built_provider_still_has_a_repr():
    # A provider whose construction was refused never set its wire; tracebacks still repr it.
    half_built = object.__new__(OpenAIProvider)
    assert repr(half_built) == "OpenAIProvider(model=None, base_url=None, stream=None)"


# -- keywords that are no setting ---------------------------------------------------------------
#: Every door that takes provider settings as keywords, each aimed at a server of its own.
DOORS: list[tuple[str, Any]] = [
    ("openai", lambda **kw: openai("m", base_url="http://127.0.0.1:9/v1", **kw)),
    ("anthropic", lambda **kw: anthropic("m", base_url="http://127.0.0.1:9", **kw)),
    ("ollama", lambda **kw: ollama("m", **kw)),
    ("openai", lambda **kw: provider_from_string("openai:m", base_url="http://127.0.0.1:9/v1", **kw)),
    ("ollama", lambda **kw: provider_from_string("ollama:m", **kw)),
    ("openai", lambda **kw: OpenAIProvider(model="m", base_url="http://127.0.0.1:9/v1", **kw)),
]
VALUE = "s3cret-VALUE-never-shown"


@pytest.mark.parametrize(("provider", "door"), DOORS)
@pytest.mark.parametrize("name", ["temperature", "top_p", "seed", "stop", "num_ctx", "Temperature"])
def test_a_generation_setting_passed_as_a_keyword_is_sent_to_options(provider: str, door: Any, name: str) -> None:
    with pytest.raises(ProviderConfigError) as caught:
        door(**{name: VALUE})
    error = caught.value
    assert (error.code, error.provider, error.setting) == ("ERR_PROVIDER_CONFIG", provider, name)
    assert f"options={{'{name.lower()}': ...}}" in str(error) and "generation setting" in str(error)
    assert VALUE not in str(error) and VALUE not in repr(error.evidence())


@pytest.mark.parametrize(("provider", "door"), DOORS)
@pytest.mark.parametrize(("name", "meant"), [
    ("max_token", "max_tokens"), ("timout", "timeout"), ("base_uri", "base_url"), ("apikey", "api_key"),
    ("max_concurrancy", "max_concurrency"), ("top_logprobs", "logprobs"), ("retries", "max_retries"),
])
def test_a_misspelt_setting_is_refused_with_the_closest_real_name(provider: str, door: Any, name: str,
                                                                  meant: str) -> None:
    with pytest.raises(ProviderConfigError) as caught:
        door(**{name: VALUE})
    assert caught.value.setting == name and f"did you mean '{meant}'?" in str(caught.value)
    assert VALUE not in str(caught.value)


@pytest.mark.parametrize(("name", "meant"), [("temprature", "temperature"), ("top-p", "top_p"),
                                             ("presence_penalti", "presence_penalty")])
def test_a_misspelt_generation_setting_is_sent_to_options_under_its_real_name(name: str, meant: str) -> None:
    with pytest.raises(ProviderConfigError) as caught:
        openai("m", base_url="http://127.0.0.1:9/v1", **{name: VALUE})
    assert f"options={{'{meant}': ...}}" in str(caught.value) and VALUE not in str(caught.value)


def test_a_keyword_close_to_nothing_lists_the_settings_there_are() -> None:
    with pytest.raises(ProviderConfigError) as caught:
        ollama("m", zebra=VALUE, aardvark=VALUE)
    error = caught.value
    assert error.setting == "aardvark" and "1 other unknown keyword" in error.received
    assert "max_concurrency" in str(error) and "options=" in str(error) and VALUE not in str(error)


@pytest.mark.parametrize("name", ["my api key is sk-live-123", "x" * 40, "naïve\u202e", "1st"])
def test_a_keyword_that_may_be_the_callers_data_is_never_quoted(name: str) -> None:
    # ``**{...}`` can pass any string as a keyword; only a short plain name is shown
    with pytest.raises(ProviderConfigError) as caught:
        openai("m", base_url="http://127.0.0.1:9/v1", **{name: VALUE})
    error = caught.value
    assert error.setting == "**settings" and name not in str(error) and VALUE not in str(error)
    assert "not a setting of openai(...)" in str(error)


@pytest.mark.parametrize(("provider", "door"), DOORS[:3])
@pytest.mark.parametrize("second", ["other-model", "", None, 42])
def test_a_model_given_twice_is_refused_by_name_not_with_a_type_error(provider: str, door: Any, second: Any) -> None:
    with pytest.raises(ProviderConfigError) as caught:
        door(model=second)
    error = caught.value
    assert (error.code, error.provider, error.setting) == ("ERR_PROVIDER_CONFIG", provider, "model")
    assert "twice" in str(error) and "other-model" not in str(error)


@pytest.mark.parametrize(("factory", "url"), [(openai, "http://127.0.0.1:9/v1"), (anthropic, "http://127.0.0.1:9"),
                                              (ollama, None)])
def test_the_model_may_be_named_by_keyword_alone(factory: Any, url: str | None) -> None:
    settings = {"base_url": url} if url else {}
    assert factory(model="named", **settings).model == "named"
    with pytest.raises(ProviderConfigError) as caught:
        factory(**settings)
    assert caught.value.setting == "model"
