// Package fromspec is the one place the vessel reads its deployment: it
// loads deployment.toml (and each agent's package) through deployer/spec
// and turns it into the vessel's own settings. No other vessel package
// imports the deployer (runtime/internal/importrules checks this).
package fromspec

import (
	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/runtime/limits"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// Load reads the deployment at path, with env (NAME_FILE aware) for its
// env: references, into settings: what the vessel does at start and on
// every reload.
func Load(path string, env func(name string) (string, bool)) (*settings.Deployment, error) {
	d, err := spec.LoadDeployment(path, env)
	if err != nil {
		return nil, err
	}
	return Deployment(d), nil
}

// Deployment is d as the vessel's settings, with each agent's derived
// values (provider profile, token parameter, fingerprint) computed here.
func Deployment(d *spec.Deployment) *settings.Deployment {
	out := &settings.Deployment{
		Path: d.Path,
		Vessel: settings.Vessel{
			FrontAddress: d.Vessel.FrontAddress, PublicURL: d.Vessel.PublicURL,
			Port: d.Vessel.Port, GRPCPort: d.Vessel.GRPCPort, GRPCPublicAddress: d.Vessel.GRPCPublicAddress,
			TaskTTLHours: d.Vessel.TaskTTLHours, TaskStore: d.Vessel.TaskStore,
			RequestBodyTimeoutSecs: d.Vessel.RequestBodyTimeoutSecs, ShutdownGraceSecs: d.Vessel.ShutdownGraceSecs,
		},
		Search: settings.Search{Provider: d.Search.Provider},
		Limits: limits.Limits(d.Limits),
	}
	for _, a := range d.Apps {
		out.Apps = append(out.Apps, settings.App(a))
	}
	for _, is := range d.Issuers {
		out.Issuers = append(out.Issuers, settings.Issuer(is))
	}
	for i := range d.Agents {
		out.Agents = append(out.Agents, agent(d, &d.Agents[i]))
	}
	return out
}

func agent(d *spec.Deployment, a *spec.Agent) settings.Agent {
	out := settings.Agent{
		ID:         a.ID,
		Sandbox:    settings.Sandbox{Runtime: a.Sandbox.Runtime},
		ModelRoute: a.ModelRoute,
		Provider:   d.Profile(a),
		TokenParam: d.TokenParam(a),
		PackageDir: a.PackageDir,
		Manifest:   manifest(a.Manifest),
	}
	out.Fingerprint, out.FingerprintErr = spec.Fingerprint(d, a.ID)
	for _, m := range a.Sandbox.Mounts {
		out.Sandbox.Mounts = append(out.Sandbox.Mounts, settings.Mount(m))
	}
	if a.Services != nil {
		out.Services = make(map[string]settings.Service, len(a.Services))
		for n, s := range a.Services {
			out.Services[n] = settings.Service(s)
		}
	}
	if a.MCP != nil {
		out.MCP = make(map[string]settings.MCPServer, len(a.MCP))
		for n, m := range a.MCP {
			out.MCP[n] = settings.MCPServer(m)
		}
	}
	if a.Approval != nil {
		ap := settings.Approval(*a.Approval)
		out.Approval = &ap
	}
	out.PromptFiles = spec.PromptFiles(a.Manifest)
	return out
}

func manifest(m *spec.Manifest) *settings.Manifest {
	if m == nil {
		return nil
	}
	out := &settings.Manifest{
		Name: m.Name, Description: m.Description, Version: m.Version, Examples: m.Examples,
		DeadlineSecs: m.DeadlineSecs,
		Model: settings.Model{
			Name: m.Model.Name, BaseURL: m.Model.BaseURL, APIKey: m.Model.APIKey,
			AcceptsImages: m.Model.AcceptsImages, MaxSteps: m.Model.MaxSteps,
			MaxAnswerBytes: m.Model.MaxAnswerBytes, MaxToolArgumentsBytes: m.Model.MaxToolArgumentsBytes,
			FirstByteTimeoutSecs: m.Model.FirstByteTimeoutSecs, IdleTimeoutSecs: m.Model.IdleTimeoutSecs,
			RequestSettings: requestSettings(m.Model.RequestSettings),
		},
		Tools:  settings.Builtins(m.Tools),
		Output: settings.Output(m.Output),
	}
	for _, t := range m.Declared {
		out.Declared = append(out.Declared, tool(t))
	}
	for _, t := range m.MCP {
		out.MCP = append(out.MCP, tool(t))
	}
	return out
}

func requestSettings(r spec.RequestSettings) settings.RequestSettings {
	out := settings.RequestSettings{
		MaxOutputTokens: r.MaxOutputTokens, Temperature: r.Temperature, TopP: r.TopP, Stop: r.Stop,
		Seed: r.Seed, ReasoningEffort: r.ReasoningEffort, ExtraBody: r.ExtraBody,
	}
	if r.ResponseFormat != nil {
		rf := settings.ResponseFormat(*r.ResponseFormat)
		out.ResponseFormat = &rf
	}
	return out
}

func tool(t spec.Tool) settings.Tool {
	out := settings.Tool{
		Name: t.Name, Description: t.Description, Command: t.Command, Service: t.Service, Path: t.Path,
		Scope: t.Scope, TimeoutSeconds: t.TimeoutSeconds, Parameters: t.Parameters, File: t.File,
	}
	if t.MCP != nil {
		m := settings.StdioMCP(*t.MCP)
		out.MCP = &m
	}
	return out
}
