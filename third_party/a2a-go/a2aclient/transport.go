// Copyright 2025 The A2A Authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package a2aclient

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

const defaultRequestTimeout = 3 * time.Minute

// Transport defines a transport-agnostic interface for making A2A requests.
// Implementations are a translation layer between a2a core types and wire formats.
type Transport interface {
	// GetTask calls the 'GetTask' protocol method.
	GetTask(context.Context, ServiceParams, *a2a.GetTaskRequest) (*a2a.Task, error)

	// ListTasks calls the 'ListTasks' protocol method.
	ListTasks(context.Context, ServiceParams, *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error)

	// CancelTask calls the 'CancelTask' protocol method.
	CancelTask(context.Context, ServiceParams, *a2a.CancelTaskRequest) (*a2a.Task, error)

	// SendMessage calls the 'SendMessage' protocol method (non-streaming).
	SendMessage(context.Context, ServiceParams, *a2a.SendMessageRequest) (a2a.SendMessageResult, error)

	// SubscribeToTask calls the `SubscribeToTask` protocol method.
	SubscribeToTask(context.Context, ServiceParams, *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error]

	// SendStreamingMessage calls the 'SendStreamingMessage' protocol method (streaming).
	SendStreamingMessage(context.Context, ServiceParams, *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error]

	// GetTaskPushConfig calls the `GetTaskPushNotificationConfig` protocol method.
	GetTaskPushConfig(context.Context, ServiceParams, *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error)

	// ListTaskPushConfigs calls the `ListTaskPushNotificationConfig` protocol method.
	ListTaskPushConfigs(context.Context, ServiceParams, *a2a.ListTaskPushConfigRequest) ([]*a2a.PushConfig, error)

	// CreateTaskPushConfig calls the `CreateTaskPushNotificationConfig` protocol method.
	CreateTaskPushConfig(context.Context, ServiceParams, *a2a.PushConfig) (*a2a.PushConfig, error)

	// DeleteTaskPushConfig calls the `DeleteTaskPushNotificationConfig` protocol method.
	DeleteTaskPushConfig(context.Context, ServiceParams, *a2a.DeleteTaskPushConfigRequest) error

	// GetExtendedAgentCard calls the 'GetExtendedAgentCard' protocol method.
	GetExtendedAgentCard(context.Context, ServiceParams, *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error)

	// Destroy cleans up resources associated with the transport (eg. close a gRPC channel).
	Destroy() error
}

// TransportFactory creates an A2A protocol connection to the provided URL.
type TransportFactory interface {
	// Create creates an A2A protocol connection to the provided URL.
	Create(ctx context.Context, card *a2a.AgentCard, iface *a2a.AgentInterface) (Transport, error)
}

// TransportFactoryFn implements TransportFactory.
type TransportFactoryFn func(ctx context.Context, card *a2a.AgentCard, iface *a2a.AgentInterface) (Transport, error)

// Create implements [TransportFactory] interface.
func (fn TransportFactoryFn) Create(ctx context.Context, card *a2a.AgentCard, iface *a2a.AgentInterface) (Transport, error) {
	return fn(ctx, card, iface)
}

var errNotImplemented = errors.New("not implemented")

type unimplementedTransport struct{}

var _ Transport = (*unimplementedTransport)(nil)

func (unimplementedTransport) GetTask(ctx context.Context, params ServiceParams, query *a2a.GetTaskRequest) (*a2a.Task, error) {
	return nil, errNotImplemented
}

func (unimplementedTransport) ListTasks(ctx context.Context, params ServiceParams, request *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return nil, errNotImplemented
}

func (unimplementedTransport) CancelTask(ctx context.Context, params ServiceParams, id *a2a.CancelTaskRequest) (*a2a.Task, error) {
	return nil, errNotImplemented
}

func (unimplementedTransport) SendMessage(ctx context.Context, params ServiceParams, message *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	return nil, errNotImplemented
}

func (unimplementedTransport) SubscribeToTask(ctx context.Context, params ServiceParams, id *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(nil, errNotImplemented)
	}
}

func (unimplementedTransport) SendStreamingMessage(ctx context.Context, params ServiceParams, message *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(nil, errNotImplemented)
	}
}

func (unimplementedTransport) GetTaskPushConfig(ctx context.Context, params ServiceParams, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	return nil, errNotImplemented
}

func (unimplementedTransport) ListTaskPushConfigs(ctx context.Context, params ServiceParams, req *a2a.ListTaskPushConfigRequest) ([]*a2a.PushConfig, error) {
	return nil, errNotImplemented
}

func (unimplementedTransport) CreateTaskPushConfig(ctx context.Context, params ServiceParams, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	return nil, errNotImplemented
}

func (unimplementedTransport) DeleteTaskPushConfig(ctx context.Context, params ServiceParams, req *a2a.DeleteTaskPushConfigRequest) error {
	return errNotImplemented
}

func (unimplementedTransport) GetExtendedAgentCard(ctx context.Context, params ServiceParams, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	return nil, errNotImplemented
}

func (unimplementedTransport) Destroy() error {
	return nil
}

type tenantTransportDecorator struct {
	base   Transport
	tenant string
	config *Config
}

var _ Transport = (*tenantTransportDecorator)(nil)

func (d *tenantTransportDecorator) updateTenant(ctx context.Context, current string) string {
	if current != "" {
		return current
	}
	if d.tenant != "" {
		return d.tenant
	}
	if d.config != nil && d.config.DisableTenantPropagation {
		return ""
	}
	if tenant, ok := a2a.TenantFrom(ctx); ok {
		return tenant
	}
	return ""
}

func (d *tenantTransportDecorator) GetTask(ctx context.Context, params ServiceParams, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	req.Tenant = d.updateTenant(ctx, req.Tenant)
	return d.base.GetTask(ctx, params, req)
}

func (d *tenantTransportDecorator) ListTasks(ctx context.Context, params ServiceParams, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	req.Tenant = d.updateTenant(ctx, req.Tenant)
	return d.base.ListTasks(ctx, params, req)
}

func (d *tenantTransportDecorator) CancelTask(ctx context.Context, params ServiceParams, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	req.Tenant = d.updateTenant(ctx, req.Tenant)
	return d.base.CancelTask(ctx, params, req)
}

func (d *tenantTransportDecorator) SendMessage(ctx context.Context, params ServiceParams, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	req.Tenant = d.updateTenant(ctx, req.Tenant)
	return d.base.SendMessage(ctx, params, req)
}

func (d *tenantTransportDecorator) SubscribeToTask(ctx context.Context, params ServiceParams, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	req.Tenant = d.updateTenant(ctx, req.Tenant)
	return d.base.SubscribeToTask(ctx, params, req)
}

func (d *tenantTransportDecorator) SendStreamingMessage(ctx context.Context, params ServiceParams, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	req.Tenant = d.updateTenant(ctx, req.Tenant)
	return d.base.SendStreamingMessage(ctx, params, req)
}

func (d *tenantTransportDecorator) GetTaskPushConfig(ctx context.Context, params ServiceParams, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	req.Tenant = d.updateTenant(ctx, req.Tenant)
	return d.base.GetTaskPushConfig(ctx, params, req)
}

func (d *tenantTransportDecorator) ListTaskPushConfigs(ctx context.Context, params ServiceParams, req *a2a.ListTaskPushConfigRequest) ([]*a2a.PushConfig, error) {
	req.Tenant = d.updateTenant(ctx, req.Tenant)
	return d.base.ListTaskPushConfigs(ctx, params, req)
}

func (d *tenantTransportDecorator) CreateTaskPushConfig(ctx context.Context, params ServiceParams, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	req.Tenant = d.updateTenant(ctx, req.Tenant)
	return d.base.CreateTaskPushConfig(ctx, params, req)
}

func (d *tenantTransportDecorator) DeleteTaskPushConfig(ctx context.Context, params ServiceParams, req *a2a.DeleteTaskPushConfigRequest) error {
	req.Tenant = d.updateTenant(ctx, req.Tenant)
	return d.base.DeleteTaskPushConfig(ctx, params, req)
}

func (d *tenantTransportDecorator) GetExtendedAgentCard(ctx context.Context, params ServiceParams, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	req.Tenant = d.updateTenant(ctx, req.Tenant)
	return d.base.GetExtendedAgentCard(ctx, params, req)
}

func (d *tenantTransportDecorator) Destroy() error {
	return d.base.Destroy()
}
