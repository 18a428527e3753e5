#!/usr/bin/env python3
"""Writes the ROS 2 package runlab_msgs (rosidl .idl files, package.xml, CMakeLists.txt) from
runlab's DDS message set, idl/runlab_msgs.idl, so that rosidl generates the very DDS types
runlab speaks: runlab_msgs::msg::dds_::X_ is rosidl's name for runlab_msgs/msg/X, and the
client_id / sequence_number members that open each service request and reply are the header
rmw_cyclonedds puts there itself, so the .srv side leaves them out.

Usage: scripts/ros2_package.py [IDL] OUTDIR   (IDL: default idl/runlab_msgs.idl)
The output is committed as idl/ros2/runlab_msgs/ and installed by `cmake --install` to
PREFIX/share/runlab/ros2/runlab_msgs; tests/cli/test_ros2_package.sh checks it is up to date.
Only the subset of IDL that file uses is read (modules, @final structs, constant modules,
`//` comments); anything else is an error naming the line."""
import os
import re
import sys

HEADER_FIELDS = ("client_id", "sequence_number")  # rmw_cyclonedds's service header


def fail(lineno, what):
    sys.exit(f"ros2_package.py: line {lineno}: {what}")


def parse(text):
    """Returns [(kind, name, items, comment)] in file order: kind 'msg', 'srv' or 'const';
    items: (type, name, comment) members or (type, name, value) constants."""
    out, stack, cur = [], [], None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line, _, comment = raw.partition("//")
        line, comment = line.strip(), comment.strip()
        if not line:
            continue
        m = re.fullmatch(r"module (\w+) \{", line)
        if m:
            stack.append(m.group(1))
            if m.group(1).endswith("_Constants"):
                cur = ("const", m.group(1), [], "")
                out.append(cur)
            continue
        m = re.fullmatch(r"@final struct (\w+)_ \{", line)
        if m:
            if stack[:3] not in (["runlab_msgs", "msg", "dds_"], ["runlab_msgs", "srv", "dds_"]):
                fail(lineno, "a struct outside runlab_msgs::msg::dds_ / srv::dds_")
            cur = (stack[1], m.group(1), [], comment)
            out.append(cur)
            continue
        m = re.fullmatch(r"const (\w+) (\w+) = (\S+);", line)
        if m and cur and cur[0] == "const":
            cur[2].append((m.group(1), m.group(2), m.group(3)))
            continue
        m = re.fullmatch(r"((?:sequence<)?[\w:]+>?) (\w+);", line)
        if m and cur and cur[0] != "const":
            cur[2].append((m.group(1), m.group(2), comment))
            continue
        if line == "};":
            if cur and cur[0] == "const" and stack and stack[-1] == cur[1]:
                stack.pop()
                cur = None
            elif cur:
                cur = None
            elif stack:
                stack.pop()
            else:
                fail(lineno, "unbalanced '};'")
            continue
        fail(lineno, f"not understood: {line}")
    return out


def ros_type(t, deps):
    """runlab_msgs::msg::dds_::X_ -> runlab_msgs::msg::X (noting the include)."""
    def repl(m):
        deps.add(m.group(1))
        return f"runlab_msgs::msg::{m.group(1)}"
    return re.sub(r"runlab_msgs::msg::dds_::(\w+)_", repl, t)


def verbatim(text, indent):
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'{indent}@verbatim (language="comment", text=\n{indent}  "{text}")\n'


def struct_text(name, members, indent, deps, drop=()):
    s = ""
    for t, n, c in members:
        if n in drop:
            continue
        if c:
            s += verbatim(c, indent + "  ")
        s += f"{indent}  {ros_type(t, deps)} {n};\n"
    return f"{indent}struct {name} {{\n{s}{indent}}};\n"


def file_text(source, kind, body, deps):
    inc = "".join(f'#include "runlab_msgs/msg/{d}.idl"\n' for d in sorted(deps))
    return (f"// runlab_msgs/{kind}/{source}.idl, written by scripts/ros2_package.py from runlab's\n"
            f"// idl/runlab_msgs.idl: do not edit (run the script).\n\n"
            f"{inc}{chr(10) if inc else ''}module runlab_msgs {{\n  module {kind} {{\n{body}  }};\n}};\n")


def main():
    args = sys.argv[1:]
    if len(args) not in (1, 2):
        sys.exit(__doc__.split("\n\n")[1])
    src = args[0] if len(args) == 2 else os.path.join(os.path.dirname(__file__), "..", "idl", "runlab_msgs.idl")
    outdir = args[-1]
    items = parse(open(src, encoding="utf-8").read())
    consts = {name[: -len("_Constants")]: vals for kind, name, vals, _ in items if kind == "const"}
    files = {}
    services = {}
    for kind, name, members, comment in items:
        if kind == "msg":
            deps = set()
            body = ""
            if name in consts:
                body += f"    module {name}_Constants {{\n"
                body += "".join(f"      const {t} {n} = {v};\n" for t, n, v in consts[name])
                body += "    };\n"
            if comment:
                body += verbatim(comment, "    ")
            body += struct_text(name, members, "    ", deps)
            files[f"msg/{name}.idl"] = file_text(name, "msg", body, deps - {name})
        elif kind == "srv":
            m = re.fullmatch(r"(\w+)_(Request|Response)", name)
            if not m:
                sys.exit(f"ros2_package.py: service type {name}: expected <Service>_Request/_Response")
            if [n for _, n, _ in members[:2]] != list(HEADER_FIELDS):
                sys.exit(f"ros2_package.py: {name}: expected client_id, sequence_number first")
            services.setdefault(m.group(1), []).append((name, members))
    for svc, parts in services.items():
        deps = set()
        body = "".join(struct_text(n, mem, "    ", deps, HEADER_FIELDS) for n, mem in parts)
        files[f"srv/{svc}.idl"] = file_text(svc, "srv", body, deps)
    listed = "".join(f'  "{f}"\n' for f in files)
    files["CMakeLists.txt"] = (
        "# The ROS 2 package of runlab's messages and services (written by runlab's\n"
        "# scripts/ros2_package.py from idl/runlab_msgs.idl: do not edit).\n"
        "cmake_minimum_required(VERSION 3.8)\nproject(runlab_msgs)\n\n"
        "find_package(ament_cmake REQUIRED)\nfind_package(rosidl_default_generators REQUIRED)\n\n"
        f"rosidl_generate_interfaces(${{PROJECT_NAME}}\n{listed})\n\n"
        "ament_export_dependencies(rosidl_default_runtime)\nament_package()\n")
    files["package.xml"] = (
        '<?xml version="1.0"?>\n<package format="3">\n  <name>runlab_msgs</name>\n'
        "  <version>0.1.0</version>\n"
        "  <description>runlab's lab messages and services: the same DDS types as runlab's\n"
        "    idl/runlab_msgs.idl (written from it by scripts/ros2_package.py)</description>\n"
        '  <maintainer email="runlab@localhost">runlab</maintainer>\n'
        "  <license>Same as runlab</license>\n\n"
        "  <buildtool_depend>ament_cmake</buildtool_depend>\n"
        "  <buildtool_depend>rosidl_default_generators</buildtool_depend>\n"
        "  <exec_depend>rosidl_default_runtime</exec_depend>\n"
        "  <member_of_group>rosidl_interface_packages</member_of_group>\n\n"
        "  <export>\n    <build_type>ament_cmake</build_type>\n  </export>\n</package>\n")
    for rel, text in files.items():
        path = os.path.join(outdir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
