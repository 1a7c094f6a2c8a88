// Package deploy holds the recipes for running load_tester on many machines
// (docs/distributed.md): a Kubernetes Indexed Job (kubernetes/), an ssh
// runner (ssh/), the container entrypoint and image (run-instance.sh,
// Dockerfile). It has no code; its tests check the recipes without a
// cluster: the manifest's fields, the log collection against recorded logs,
// and the ssh runner across network namespaces.
package deploy
