package kube

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// Every generated pod passes PodSecurity admission's own checks at the
// level its namespace enforces, and a sandbox pod fails "restricted" (so
// the sandboxes' namespace claims no more than it can hold, and the check
// is not vacuous).
func TestPodSecurityAdmission(t *testing.T) {
	eval, err := policy.NewEvaluator(policy.DefaultChecks())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"basic", "custom"} {
		t.Run(name, func(t *testing.T) {
			d := load(t, name)
			o := options(t, name)
			o.SeccompInstallerImage = "busybox:stable"
			out := generate(t, d, o)
			objs := objects(t, out.Manifests)
			levels := map[string]psaapi.Level{}
			for _, obj := range objs {
				if ns, ok := obj.(*corev1.Namespace); ok {
					lv, err := psaapi.ParseLevel(ns.Labels[psaapi.EnforceLevelLabel])
					if err != nil {
						t.Fatalf("namespace %s: %v", ns.Name, err)
					}
					levels[ns.Name] = lv
				}
			}
			pods := 0
			for _, obj := range objs {
				var tpl *corev1.PodTemplateSpec
				var ns, wl string
				switch x := obj.(type) {
				case *appsv1.Deployment:
					tpl, ns, wl = &x.Spec.Template, x.Namespace, x.Name
				case *appsv1.DaemonSet:
					tpl, ns, wl = &x.Spec.Template, x.Namespace, x.Name
				default:
					continue
				}
				pods++
				level, ok := levels[ns]
				if !ok {
					t.Fatalf("%s: namespace %s not generated", wl, ns)
				}
				lv := psaapi.LevelVersion{Level: level, Version: psaapi.LatestVersion()}
				agg := policy.AggregateCheckResults(eval.EvaluatePod(lv, &tpl.ObjectMeta, &tpl.Spec))
				if !agg.Allowed {
					t.Errorf("%s/%s refused at %s: %s: %s", ns, wl, level, agg.ForbiddenReason(), agg.ForbiddenDetail())
				}
				if level == psaapi.LevelBaseline {
					strict := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
					if policy.AggregateCheckResults(eval.EvaluatePod(strict, &tpl.ObjectMeta, &tpl.Spec)).Allowed {
						t.Errorf("%s/%s passes restricted: its namespace should claim restricted", ns, wl)
					}
				}
			}
			if want := 2 + len(d.Agents) + 1; pods < want {
				t.Errorf("%d workloads checked, want at least %d", pods, want)
			}
		})
	}
}
