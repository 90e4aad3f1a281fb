package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/astraldeep/astralvessel-go/vessel/client/webhook"
)

// Webhook is where the vessel pushes a task's status changes (docs/jobs.md):
// a URL inside the push_urls the deployment grants the caller, and a token
// the receiver checks (webhook.Receiver.Token).
type Webhook struct {
	URL   string
	Token string
	// ID names the config; the vessel makes one when empty.
	ID string
	// Working asks for every WORKING status update of the task too (the
	// turn's events, one per delivery, in order before the end), not only
	// its terminal and interrupted states: the registration requests the
	// push-working extension (webhook.WorkingExtension) in A2A-Extensions.
	// A vessel that does not know it stores the webhook without it.
	Working bool
}

// withExtension requests the push-working extension on a call registering
// a webhook that wants WORKING updates.
func (w *Webhook) withExtension(ctx context.Context) context.Context {
	if !w.Working {
		return ctx
	}
	return a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{a2a.SvcParamExtensions: {webhook.WorkingExtension}})
}

func (w *Webhook) config(taskID a2a.TaskID) *a2a.PushConfig {
	return &a2a.PushConfig{TaskID: taskID, ID: w.ID, URL: w.URL, Token: w.Token}
}

// Submit starts a turn in the background (SendMessage with
// returnImmediately) and returns its task id at once; the turn runs to its
// end with nobody connected. With hook, the vessel pushes the task's
// status changes there. Follow it with Get, Subscribe or the webhook.
func (c *Client) Submit(ctx context.Context, req TurnRequest, hook *Webhook) (*Result, error) {
	sreq, err := buildRequest(req)
	if err != nil {
		return nil, err
	}
	if sreq.Config == nil {
		sreq.Config = &a2a.SendMessageConfig{}
	}
	sreq.Config.ReturnImmediately = true
	if hook != nil {
		if hook.URL == "" {
			return nil, errors.New("client: a webhook needs a URL")
		}
		sreq.Config.PushConfig = hook.config("")
		ctx = hook.withExtension(ctx)
	}
	res, err := c.a2a.SendMessage(ctx, sreq)
	if err != nil {
		return nil, fmt.Errorf("client: submit to %s: %w", c.agentID, err)
	}
	t, ok := res.(*a2a.Task)
	if !ok {
		return nil, fmt.Errorf("client: submit: the agent answered %T, not a task", res)
	}
	return resultFromTask(t), nil
}

// AddWebhook registers a webhook on a task the caller owns and returns its
// config as stored (with its id).
func (c *Client) AddWebhook(ctx context.Context, taskID string, hook Webhook) (*a2a.PushConfig, error) {
	cfg, err := c.a2a.CreateTaskPushConfig(hook.withExtension(ctx), hook.config(a2a.TaskID(taskID)))
	if err != nil {
		return nil, fmt.Errorf("client: register webhook on %s: %w", taskID, err)
	}
	return cfg, nil
}

// Webhooks lists a task's webhooks.
func (c *Client) Webhooks(ctx context.Context, taskID string) ([]*a2a.PushConfig, error) {
	list, err := c.a2a.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: a2a.TaskID(taskID)})
	if err != nil {
		return nil, fmt.Errorf("client: list webhooks of %s: %w", taskID, err)
	}
	return list, nil
}

// RemoveWebhook deletes a webhook; removing one that is gone succeeds.
func (c *Client) RemoveWebhook(ctx context.Context, taskID, configID string) error {
	if err := c.a2a.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: a2a.TaskID(taskID), ID: configID}); err != nil {
		return fmt.Errorf("client: remove webhook %s of %s: %w", configID, taskID, err)
	}
	return nil
}
