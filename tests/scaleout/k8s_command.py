"""Reads a Kubernetes Job manifest and prints, as bash assignments, what its pods would run on
this machine: `completions` (1 unless the Job is Indexed) and `command`, the container's command
and arguments with every volume's mountPath replaced by VOLUMES/<volume name>. For a configMap
volume made by the `kubectl create configmap NAME --from-file=KEY=FILE` its comments show,
`scenario_file` is where that volume's KEY appears (VOLUMES/<volume name>/KEY).

    python3 k8s_command.py scripts/k8s-indexed-job.yaml /tmp/volumes

Used by k8s.sh, which runs the command once per JOB_COMPLETION_INDEX.
"""

import re
import shlex
import sys

import yaml


def fail(message):
    sys.exit(f"{sys.argv[1]}: {message}")


def main():
    manifest, volumes = sys.argv[1], sys.argv[2]
    with open(manifest, encoding="utf-8") as f:
        text = f.read()
    job = yaml.safe_load(text)
    if job.get("kind") != "Job":
        fail(f"kind is {job.get('kind')!r}, expected Job")
    spec = job["spec"]
    indexed = spec.get("completionMode") == "Indexed"
    completions = int(spec.get("completions", 1)) if indexed else 1
    pod = spec["template"]["spec"]
    containers = pod["containers"]
    if len(containers) != 1:
        fail(f"{len(containers)} containers, expected one")
    container = containers[0]
    argv = [str(a) for a in container.get("command", []) + container.get("args", [])]
    if not argv:
        fail("the container has no command")
    known = {v["name"] for v in pod.get("volumes", [])}
    mounts = container.get("volumeMounts", [])
    # A pod that named a path outside its volumes would write to this machine's, not a temp folder.
    roots = [m["mountPath"].rstrip("/") + "/" for m in mounts]
    for arg in argv[1:]:
        for path in re.findall(r"(?:^|(?<=[\s\"'=]))(/[^\s\"';]*)", arg):
            if not any((path + "/").startswith(root) for root in roots):
                fail(f"{path} is outside the pod's volumes ({', '.join(roots)})")
    for mount in mounts:
        if mount["name"] not in known:
            fail(f"volumeMount {mount['name']!r} names no volume of the pod")
        # The mount path as a whole path component, wherever it stands in an argument.
        path = re.compile(r"(?<![\w./-])" + re.escape(mount["mountPath"].rstrip("/")) + r"(?![\w.-])")
        target = f"{volumes}/{mount['name']}"
        argv = [path.sub(lambda _: target, a) for a in argv]
    print(f"completions={completions}")
    made = re.search(r"kubectl create configmap (\S+) --from-file=([^=\s]+)=", text)
    for volume in pod.get("volumes", []):
        config_map = volume.get("configMap")
        if config_map is None:
            continue
        if made is None or made.group(1) != config_map["name"]:
            fail(f"no `kubectl create configmap {config_map['name']}` in the comments")
        print("scenario_file=" + shlex.quote(f"{volumes}/{volume['name']}/{made.group(2)}"))
    print("command=(" + " ".join(shlex.quote(a) for a in argv) + ")")


if __name__ == "__main__":
    main()
