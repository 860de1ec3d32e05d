"""system_pkgconfig: turns pkg-config output of Debian -dev packages into cc_library targets.

Headers need nothing: everything is under /usr/include, a built-in include dir of the auto-configured
toolchain. Link flags come from pkg-config so that transitive libraries (absl_synchronization under
grpc++ headers, for instance) are never missed.
"""

def _impl(rctx):
    lines = ['package(default_visibility = ["//visibility:public"])', ""]
    for name, modules in rctx.attr.libs.items():
        mods = [m for m in modules.split(" ") if m]
        libs = rctx.execute(["pkg-config", "--libs"] + mods)
        cflags = rctx.execute(["pkg-config", "--cflags"] + mods)
        if libs.return_code != 0 or cflags.return_code != 0:
            fail("pkg-config %s failed (run tools/setup.sh to install the -dev packages): %s%s" %
                 (modules, libs.stderr, cflags.stderr))
        seen = {}
        linkopts = []
        for tok in libs.stdout.strip().split(" "):
            if not tok or tok in seen:  # pkg-config repeats absl libs dozens of times
                continue
            seen[tok] = True
            linkopts.append(tok)
        defines = [t[2:] for t in cflags.stdout.strip().split(" ") if t.startswith("-D")]
        lines.append("cc_library(name = %r, linkopts = %r, defines = %r)" % (name, linkopts, defines))
    rctx.file("WORKSPACE", "")
    rctx.file("BUILD", "\n".join(lines) + "\n")

system_pkgconfig = repository_rule(
    implementation = _impl,
    attrs = {"libs": attr.string_dict(doc = "target name -> space separated pkg-config modules")},
    local = True,
    environ = ["PKG_CONFIG_PATH"],
)
