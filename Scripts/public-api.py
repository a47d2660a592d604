#!/usr/bin/env python3
"""The public interface of the AppDataKit product, one declaration a line, from the built modules.

  python3 Scripts/public-api.py [MODULES_DIR]            print it
  python3 Scripts/public-api.py [MODULES_DIR] --write    write Docs/public-api.txt

MODULES_DIR is the build's Modules folder (default: `swift build --show-bin-path`/Modules). Each
of the product's modules is read with swift-symbolgraph-extract at access level public (what
another package sees, `package` declarations left out), and each symbol written as
`Module  kind  Path.To.Name  declaration`, sorted. PublicAPITests compares the built modules
with Docs/public-api.txt: a public declaration added or changed by accident fails it; a
deliberate one is written with --write and reviewed in the diff (Docs/library.md).
"""
import glob, json, os, shutil, subprocess, sys, tempfile

MODULES = ["AppDataKit", "AppDataCore", "AppDataReaders", "AppDataReports", "AppDataMigration", "AppDataSystem"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def target_triple():
    out = subprocess.run(["swift", "-print-target-info"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["target"]["triple"]


def extractor():
    swift = shutil.which("swift")
    if swift:
        beside = os.path.join(os.path.dirname(os.path.realpath(swift)), "swift-symbolgraph-extract")
        if os.path.exists(beside):
            return beside
    return shutil.which("swift-symbolgraph-extract") or "swift-symbolgraph-extract"


def lines(modules_dir):
    maps = []
    for modulemap in sorted(glob.glob(os.path.join(ROOT, "Sources", "C*", "module.modulemap"))):
        maps += ["-Xcc", "-fmodule-map-file=" + modulemap]
    triple = target_triple()
    out = []
    with tempfile.TemporaryDirectory() as work:
        for module in MODULES:
            folder = os.path.join(work, module)
            os.mkdir(folder)
            subprocess.run([extractor(), "-module-name", module, "-I", modules_dir, "-target", triple,
                            "-minimum-access-level", "public", "-skip-inherited-docs", "-output-dir", folder] + maps,
                           check=True, capture_output=True)
            for path in sorted(glob.glob(os.path.join(folder, "*.symbols.json"))):
                graph = json.load(open(path))
                for symbol in graph.get("symbols", []):
                    if symbol.get("accessLevel") not in ("public", "open"):
                        continue
                    kind = symbol["kind"]["identifier"].removeprefix("swift.")
                    name = ".".join(symbol["pathComponents"])
                    declaration = "".join(f["spelling"] for f in symbol.get("declarationFragments", []))
                    declaration = " ".join(declaration.split())
                    out.append(f"{module}  {kind}  {name}  {declaration}")
    return sorted(set(out))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if args:
        modules_dir = args[0]
    else:
        binary = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        modules_dir = os.path.join(binary, "Modules")
    text = "".join(line + "\n" for line in lines(modules_dir))
    if "--write" in sys.argv:
        with open(os.path.join(ROOT, "Docs", "public-api.txt"), "w") as f:
            f.write(text)
        print(f"public-api: wrote Docs/public-api.txt ({text.count(chr(10))} declarations)")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
