# lit configuration for tgc: pass tests on textual IR, reader and CLI tests on fixtures.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "tgc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.join(config.tgc_src_root, "test")
config.test_exec_root = os.path.join(config.tgc_obj_root, "test")
config.excludes = ["Inputs", "fixtures", "unit", "tools", "CMakeLists.txt", "lit.site.cfg.py.in"]
config.substitutions.append(("%fixtures", os.path.join(config.tgc_src_root, "test", "fixtures")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["tgc-opt", "tgc", "safetensors-compare"], [config.tgc_tools_dir])
