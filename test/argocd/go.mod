// Argo CD's Lua health checks (deploy/argocd/health/) against their fixtures; see main.go.
module noderotation.test/argocd

go 1.25

require (
	github.com/yuin/gopher-lua v1.1.1
	layeh.com/gopher-json v0.0.0-20190114024228-97fed8db8427
	sigs.k8s.io/yaml v1.6.0
)

require go.yaml.in/yaml/v2 v2.4.2 // indirect
