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

package taskexec

import (
	"context"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

type promise struct {
	// done channel gets closed once value or err field is set
	done  chan struct{}
	value a2a.SendMessageResult
	err   error
}

func newPromise() *promise {
	return &promise{done: make(chan struct{})}
}

// setValue sets a value to which wait() resolves to after signalDone() is called.
func (p *promise) setValue(value a2a.SendMessageResult) {
	p.value = value
}

// setError sets an error to which wait() resolves to after signalDone() is called.
func (p *promise) setError(err error) {
	p.err = err
}

// signalDone is called after resolve or reject to unblock wait()-callers.
func (p *promise) signalDone() {
	close(p.done)
}

func (p *promise) wait(ctx context.Context) (a2a.SendMessageResult, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.done:
		return p.value, p.err
	}
}

func convertToCancelationResult(ctx context.Context, result a2a.SendMessageResult, err error) (*a2a.Task, error) {
	if err != nil {
		return nil, fmt.Errorf("cancelation failed: %w", err)
	}

	task, ok := result.(*a2a.Task)
	if !ok { // a2a.Message was the result of the execution
		return nil, fmt.Errorf("bug: execution result was a message: %w", a2a.ErrTaskNotCancelable)
	}

	if task.Status.State != a2a.TaskStateCanceled {
		return nil, fmt.Errorf("task was in non-cancelable state: %q: %w", task.Status.State, a2a.ErrTaskNotCancelable)
	}

	return task, nil
}
