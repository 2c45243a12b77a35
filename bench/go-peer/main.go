// Command go-peer is the benchmark's reference point: a minimal composition function on Crossplane's own
// Go SDK (function-sdk-go v0.5.0) doing the same shape of work as function-noderotation — N NodePools in as
// required resources, one desired object with a few annotations per NodePool out — the way the SDK's
// documentation writes a function (request.GetRequiredResources, composed.New, response helpers). Its
// latency is Crossplane's floor for this work; bench/function.ts drives it and ours with the same bytes.
//
// It derives nothing: the annotations are copied from the NodePool's expireAfter and name, so the figures
// measure transport, decoding, building and encoding only. Served without TLS on the address given.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"
)

// nodePools is the key of the required resources, as in function-noderotation.
const nodePools = "nodepools"

type peer struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
	log logging.Logger
}

func (p *peer) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)
	rsp.Requirements = &fnv1.Requirements{Resources: map[string]*fnv1.ResourceSelector{
		nodePools: {ApiVersion: "karpenter.sh/v1", Kind: "NodePool",
			Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{}}},
	}}
	required, err := request.GetRequiredResources(req)
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot read required resources: %w", err))
		return rsp, nil
	}
	pools, ok := required[nodePools]
	if !ok {
		return rsp, nil // first call of the requirements loop
	}
	xr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot read the composite: %w", err))
		return rsp, nil
	}
	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("cannot read desired resources: %w", err))
		return rsp, nil
	}
	plan := xr.Resource.GetName()
	defaults, _ := xr.Resource.Object["spec"].(map[string]any)["defaults"].(map[string]any)
	for _, pool := range pools {
		obj, err := policyFor(plan, pool.Resource.Object, defaults)
		if err != nil {
			response.Fatal(rsp, err)
			return rsp, nil
		}
		desired[resource.Name("rotationpolicy-"+pool.Resource.GetName())] = &resource.DesiredComposed{
			Resource: obj, Ready: resource.ReadyTrue,
		}
	}
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	response.ConditionTrue(rsp, "PlanValid", "Accepted").WithMessage(fmt.Sprintf("%d NodePools governed", len(pools)))
	return rsp, nil
}

// policyFor builds the object for one NodePool with the same fields, and so about the same size, as
// function-noderotation's RotationPolicy: the plan's defaults with every default filled in, the NodePool,
// a label and eight annotations. The annotation values are copied, not derived.
func policyFor(plan string, pool map[string]any, defaults map[string]any) (*composed.Unstructured, error) {
	name, _ := pool["metadata"].(map[string]any)["name"].(string)
	expire := resourceString(pool, "spec", "template", "spec", "expireAfter")
	tgp := resourceString(pool, "spec", "template", "spec", "terminationGracePeriod")
	obj := composed.New()
	obj.SetAPIVersion("noderotation.io/v1alpha1")
	obj.SetKind("RotationPolicy")
	obj.SetName(plan + "-" + name)
	obj.SetLabels(map[string]string{"noderotation.io/plan": plan})
	obj.SetAnnotations(map[string]string{
		"noderotation.io/nodepool":                name,
		"noderotation.io/age-threshold":           expire,
		"noderotation.io/capacity-per-occurrence": "10",
		"noderotation.io/expected-rotation":       "15m0s",
		"noderotation.io/guaranteed-chances":      "2",
		"noderotation.io/lead-time":               expire,
		"noderotation.io/rotation-bound":          tgp,
		"noderotation.io/window-period":           expire,
	})
	spec := map[string]any{
		"ageThreshold":       "auto",
		"minRotationChances": int64(2),
		"suspend":            false,
		"surge": map[string]any{
			"cooldownAfter":    "10m",
			"forcefulFallback": map[string]any{"enabled": false},
			"matchNodeRequirements": map[string]any{
				"preferred": []any{},
				"required": []any{
					"topology.kubernetes.io/zone", "kubernetes.io/arch", "karpenter.sh/capacity-type",
				},
			},
			"maxUnavailable":       int64(1),
			"readyTimeout":         "15m",
			"retryBackoff":         "30m",
			"wholeNodeReservation": map[string]any{"enabled": false},
		},
	}
	for k, v := range defaults {
		spec[k] = runtime.DeepCopyJSONValue(v)
	}
	spec["nodePools"] = []any{name}
	if err := obj.SetValue("spec", spec); err != nil {
		return nil, err
	}
	return obj, nil
}

// resourceString reads a string field; missing or of another type: "".
func resourceString(obj map[string]any, path ...string) string {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

func main() {
	address := flag.String("address", "127.0.0.1:9444", "host:port to serve on (plaintext gRPC)")
	flag.Parse()
	log, err := function.NewLogger(false)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// Serve blocks until the process is killed; bench/function.ts waits until the port accepts connections.
	err = function.Serve(&peer{log: log},
		function.Listen("tcp", *address),
		function.Insecure(true),
		function.WithMetricsServer(""),
	)
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
