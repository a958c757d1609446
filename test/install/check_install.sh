#!/usr/bin/env bash
# The installed package (docs/packaging.md), as a downstream project sees it:
#   1. `cmake --install` into a prefix, which is then moved (nothing may point back into
#      the build tree or the first prefix);
#   2. examples/cmake is configured against the moved prefix alone, built (tgc_add_model
#      compiles two models) and run;
#   3. a second build does nothing; touching one model's source recompiles that model
#      only (the app is relinked, its C file not recompiled);
#   4. pkg-config: a model compiled by the installed tgc and a C program built with
#      `pkg-config --cflags tgc`, once with model.so and once with a static archive.
#     check_install.sh <build dir> <source dir> "<C compiler> [flags]"
# (the flags: a sanitizer build's, which programs linked with a model.so need too)
set -euo pipefail
build="$1"
src="$2"
read -r -a cc <<< "$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/first" > /dev/null
mv "$work/first" "$work/prefix"
prefix="$work/prefix"
for f in bin/tgc bin/tgc-opt bin/tgc-capture lib/tgc/libtgc_runtime.a \
         include/tgc/tgc_runtime.h include/tgc/dlpack/dlpack.h \
         lib/cmake/tgc/tgcConfig.cmake lib/cmake/tgc/tgcConfigVersion.cmake \
         lib/pkgconfig/tgc.pc lib/python/tgc/__init__.py lib/python/tgc_capture/__init__.py; do
  [ -e "$prefix/$f" ] || { echo "error: $f is not installed"; exit 1; }
done
"$prefix/bin/tgc" --version

# The example's sources are copied: its models come from a cache variable.
cp -r "$src/examples/cmake" "$work/example"
cp "$src/test/fixtures/mlp/core.pt2" "$src/test/fixtures/mlp/train.pt2" "$work/"
cmake -S "$work/example" -B "$work/build" -G Ninja -DCMAKE_C_COMPILER="${cc[0]}" \
  -DCMAKE_C_FLAGS="${cc[*]:1}" \
  -DCMAKE_PREFIX_PATH="$prefix" -DMODEL_DIR="$work" > "$work/configure.log" \
  || { cat "$work/configure.log"; exit 1; }
ninja -C "$work/build" > "$work/build.log" || { cat "$work/build.log"; exit 1; }
"$work/build/app"
# mlp is a shared library the app loads, mlp_train (STATIC) is linked into it.
[ -f "$work/build/tgc_models/mlp_train/mlp_train.a" ] || { echo "error: no mlp_train.a"; exit 1; }
echo "needed: $(readelf -d "$work/build/app" | sed -n 's/.*(NEEDED).*\[\(.*\.so\)\]/\1/p' \
  | grep -v '^lib' | tr '\n' ' ')"

echo "second build:"
ninja -C "$work/build" | tail -n 1
touch "$work/core.pt2"
echo "after touching core.pt2:"
ninja -C "$work/build" | sed -e 's/^\[[0-9/]*\] //' -e "s|$work|WORK|g"

echo "pkg-config:"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
"$(pkg-config --variable=tgc tgc)" compile "$work/core.pt2" --name model -o "$work/model.so"
"${cc[@]}" -std=c11 $(pkg-config --cflags tgc) -I "$work" "$src/examples/mlp/main.c" \
  "$work/model.so" -Wl,-rpath,"$work" -o "$work/mlp"
"$work/mlp" | head -n 1
mkdir "$work/static"
"$(pkg-config --variable=tgc tgc)" compile "$work/core.pt2" --emit=static -o "$work/static/model.a"
"${cc[@]}" -std=c11 $(pkg-config --cflags tgc) -I "$work/static" "$src/examples/mlp/main.c" \
  "$work/static/model.a" $(pkg-config --variable=static_libs tgc) -o "$work/mlp-static"
echo "static: $(readelf -d "$work/mlp-static" | grep -c 'model' || true) references to a model library"
"$work/mlp-static" | head -n 1
