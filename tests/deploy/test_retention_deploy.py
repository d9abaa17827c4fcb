"""The retention CronJob as Kubernetes builds it: a real command with its archive volume mounted,
let through Redis' NetworkPolicy, and a pod that passes Pod Security "restricted" (the generic
pod checks in test_pods.py read Deployments, StatefulSets, DaemonSets and Jobs, not CronJobs)."""

from __future__ import annotations

from kits.deploy import DEPLOY, argv_of, check_argv, kustomize, needs_yaml


@needs_yaml
def test_retention_cronjob_runs_the_real_command_on_an_archive_volume() -> None:
    built = kustomize(DEPLOY / "k8s" / "base")
    jobs = [d for d in built if d["kind"] == "CronJob" and d["metadata"]["name"] == "retention"]
    assert len(jobs) == 1
    job = jobs[0]["spec"]
    assert job["concurrencyPolicy"] == "Forbid"
    pod = job["jobTemplate"]["spec"]["template"]
    assert pod["metadata"]["labels"]["sueca.arena/redis-client"] == "true"
    spec = pod["spec"]
    (c,) = spec["containers"]
    argv = argv_of(c["args"])
    check_argv(argv, "k8s retention")
    assert argv[:3] == ["sueca-arena", "retention", "run"]
    archive = argv[argv.index("--archive") + 1]
    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    claim = volumes[mounts[archive]]["persistentVolumeClaim"]["claimName"]
    assert any(d["kind"] == "PersistentVolumeClaim" and d["metadata"]["name"] == claim
               for d in built)
    assert "emptyDir" in volumes[mounts["/tmp"]]
    days = {e["name"]: e.get("value") for e in c.get("env", [])}["SUECA_RETAIN_DAYS"]
    assert int(days) > 0, "a retention job that keeps everything does nothing"
    # Pod Security "restricted"
    sc, psc = c["securityContext"], spec["securityContext"]
    assert sc["allowPrivilegeEscalation"] is False and sc["readOnlyRootFilesystem"] is True
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert psc["runAsNonRoot"] is True and psc["runAsUser"] != 0
    assert psc["seccompProfile"]["type"] == "RuntimeDefault"
