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

package pbconv

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2apb"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func mustMakeProtoMetadata(t *testing.T, meta map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(meta)
	if err != nil {
		t.Fatalf("structpb.NewStruct() error = %v", err)
	}
	return s
}

func TestToProto_toProtoMessage(t *testing.T) {
	a2aMeta := map[string]any{"key": "value"}
	pMeta, _ := structpb.NewStruct(a2aMeta)

	tests := []struct {
		name    string
		msg     *a2a.Message
		want    *a2apb.Message
		wantErr bool
	}{
		{
			name: "success",
			msg: &a2a.Message{
				ID:             "test-msg",
				ContextID:      "test-ctx",
				TaskID:         "test-task",
				Role:           a2a.MessageRoleUser,
				ReferenceTasks: []a2a.TaskID{"task-123"},
				Parts:          a2a.ContentParts{a2a.NewTextPart("hello")},
				Metadata:       a2aMeta,
			},
			want: &a2apb.Message{
				MessageId:        "test-msg",
				ContextId:        "test-ctx",
				TaskId:           "test-task",
				ReferenceTaskIds: []string{"task-123"},
				Role:             a2apb.Role_ROLE_USER,
				Parts:            []*a2apb.Part{{Part: &a2apb.Part_Text{Text: "hello"}}},
				Metadata:         pMeta,
			},
		},
		{
			name: "nil message",
			msg:  nil,
			want: nil,
		},
		{
			name: "bad metadata",
			msg: &a2a.Message{
				Metadata: map[string]any{
					"bad": func() {},
				},
			},
			wantErr: true,
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toProtoMessage(tt.msg)
			if (err != nil) != tt.wantErr {
				t.Errorf("toProtoMessage() error = %v, wantErr %v", err, tt.wantErr)
				return
			}
			if !proto.Equal(got, tt.want) {
				t.Errorf("toProtoMessage() got = %v, want %v", got, tt.want)
			}
			if !tt.wantErr {
				gotBack, err := fromProtoMessages([]*a2apb.Message{got})
				if err != nil {
					t.Errorf("fromProtoMessages() error = %v", err)
				}
				if diff := cmp.Diff([]*a2a.Message{tt.msg}, gotBack); diff != "" {
					t.Errorf("fromProtoMessages() wrong result (-want +got):\n diff = %s", diff)
				}
			}
		})
	}
}

func TestToProto_toProtoMessges(t *testing.T) {
	msgs := []*a2a.Message{
		{ID: "test-message", Role: a2a.MessageRoleUser},
		{ID: "msg2", Role: a2a.MessageRoleAgent},
	}
	msg1, _ := toProtoMessage(msgs[0])
	msg2, _ := toProtoMessage(msgs[1])

	tests := []struct {
		name    string
		msgs    []*a2a.Message
		want    []*a2apb.Message
		wantErr bool
	}{
		{
			name: "success",
			msgs: msgs,
			want: []*a2apb.Message{msg1, msg2},
		},
		{
			name: "empty slice",
			msgs: []*a2a.Message{},
			want: []*a2apb.Message{},
		},
		{
			name: "conversion error",
			msgs: []*a2a.Message{
				{ID: "test-message"},
				{Metadata: map[string]any{"bad": func() {}}},
			},
			wantErr: true,
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toProtoMessages(tt.msgs)
			if (err != nil) != tt.wantErr {
				t.Fatalf("toProtoMessage() error = %v, wantErr %v", err, tt.wantErr)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("toProtoMessage() got = %v, want %v", got, tt.want)
			}
			for i, msg := range got {
				if !proto.Equal(msg, tt.want[i]) {
					t.Errorf("toProtoMessage() got = %v, want %v", msg, tt.want[i])
				}
			}
		})
	}
}

func TestToProto_toProtoPart(t *testing.T) {
	pData, _ := structpb.NewStruct(map[string]any{"key": "value"})
	base64Content := base64.StdEncoding.EncodeToString([]byte("content"))
	tests := []struct {
		name    string
		p       a2a.Part
		want    *a2apb.Part
		wantErr bool
	}{
		{
			name: "text",
			p:    *a2a.NewTextPart("hello"),
			want: &a2apb.Part{Part: &a2apb.Part_Text{Text: "hello"}},
		},
		{
			name: "data",
			p:    *a2a.NewDataPart(map[string]any{"key": "value"}),
			want: &a2apb.Part{Part: &a2apb.Part_Data{Data: &a2apb.DataPart{Data: pData}}},
		},
		{
			name: "file with bytes",
			p: a2a.Part{
				Content:   a2a.Raw([]byte("content")),
				MediaType: "text/plain",
			},
			want: &a2apb.Part{Part: &a2apb.Part_File{File: &a2apb.FilePart{
				MimeType: "text/plain",
				File:     &a2apb.FilePart_FileWithBytes{FileWithBytes: []byte(base64Content)},
			}}},
		},
		{
			name: "file with uri",
			p: a2a.Part{
				Content:   a2a.URL("http://example.com/file"),
				MediaType: "text/plain",
				Filename:  "example",
			},
			want: &a2apb.Part{Part: &a2apb.Part_File{File: &a2apb.FilePart{
				MimeType: "text/plain",
				Name:     "example",
				File:     &a2apb.FilePart_FileWithUri{FileWithUri: "http://example.com/file"},
			}}},
		},
		{
			name:    "unsupported",
			p:       a2a.Part{Content: nil}, // Use a nil Content to represent an unsupported type
			wantErr: true,
		},
		{
			name: "bad data",
			p: a2a.Part{
				Content: a2a.Data{Value: map[string]any{"bad": func() {}}},
			},
			wantErr: true,
		},
		{
			name: "text with meta",
			p:    a2a.Part{Content: a2a.Text("hello"), Metadata: map[string]any{"hello": "world"}},
			want: &a2apb.Part{
				Part:     &a2apb.Part_Text{Text: "hello"},
				Metadata: mustMakeProtoMetadata(t, map[string]any{"hello": "world"}),
			},
		},
		{
			name: "data with meta",
			p:    a2a.Part{Content: a2a.Data{Value: map[string]any{"key": "value"}}, Metadata: map[string]any{"hello": "world"}},
			want: &a2apb.Part{
				Part:     &a2apb.Part_Data{Data: &a2apb.DataPart{Data: pData}},
				Metadata: mustMakeProtoMetadata(t, map[string]any{"hello": "world"}),
			},
		},
		{
			name: "file with meta",
			p: a2a.Part{
				Content:  a2a.Raw([]byte("content")),
				Metadata: map[string]any{"hello": "world"}},
			want: &a2apb.Part{
				Part: &a2apb.Part_File{File: &a2apb.FilePart{
					File: &a2apb.FilePart_FileWithBytes{FileWithBytes: []byte(base64Content)},
				}},
				Metadata: mustMakeProtoMetadata(t, map[string]any{"hello": "world"}),
			},
		},
		{
			name: "primitive data compat",
			p:    *a2a.NewDataPart("hello"),
			want: &a2apb.Part{
				Part:     &a2apb.Part_Data{Data: &a2apb.DataPart{Data: mustMakeProtoMetadata(t, map[string]any{"value": "hello"})}},
				Metadata: mustMakeProtoMetadata(t, map[string]any{"data_part_compat": true}),
			},
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toProtoPart(tt.p)
			if (err != nil) != tt.wantErr {
				t.Fatalf("toProtoPart() error = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr {
				if !proto.Equal(got, tt.want) {
					t.Errorf("toProtoPart() = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestToProto_toProtoRole(t *testing.T) {
	tests := []struct {
		name string
		in   a2a.MessageRole
		want a2apb.Role
	}{
		{
			name: "user",
			in:   a2a.MessageRoleUser,
			want: a2apb.Role_ROLE_USER},
		{
			name: "agent",
			in:   a2a.MessageRoleAgent,
			want: a2apb.Role_ROLE_AGENT,
		},
		{
			name: "empty",
			in:   "",
			want: a2apb.Role_ROLE_UNSPECIFIED,
		},
		{
			name: "invalid",
			in:   "invalid-role",
			want: a2apb.Role_ROLE_UNSPECIFIED,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := toProtoRole(tt.in); got != tt.want {
				t.Errorf("toProtoRole() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestToProto_toProtoTaskState(t *testing.T) {
	tests := []struct {
		name  string
		state a2a.TaskState
		want  a2apb.TaskState
	}{
		{
			name:  string(a2a.TaskStateAuthRequired),
			state: a2a.TaskStateAuthRequired,
			want:  a2apb.TaskState_TASK_STATE_AUTH_REQUIRED,
		},
		{
			name:  string(a2a.TaskStateCanceled),
			state: a2a.TaskStateCanceled,
			want:  a2apb.TaskState_TASK_STATE_CANCELLED,
		},
		{
			name:  string(a2a.TaskStateCompleted),
			state: a2a.TaskStateCompleted,
			want:  a2apb.TaskState_TASK_STATE_COMPLETED,
		},
		{
			name:  string(a2a.TaskStateFailed),
			state: a2a.TaskStateFailed,
			want:  a2apb.TaskState_TASK_STATE_FAILED,
		},
		{
			name:  string(a2a.TaskStateInputRequired),
			state: a2a.TaskStateInputRequired,
			want:  a2apb.TaskState_TASK_STATE_INPUT_REQUIRED,
		},
		{
			name:  string(a2a.TaskStateRejected),
			state: a2a.TaskStateRejected,
			want:  a2apb.TaskState_TASK_STATE_REJECTED,
		},
		{
			name:  string(a2a.TaskStateSubmitted),
			state: a2a.TaskStateSubmitted,
			want:  a2apb.TaskState_TASK_STATE_SUBMITTED,
		},
		{
			name:  string(a2a.TaskStateWorking),
			state: a2a.TaskStateWorking,
			want:  a2apb.TaskState_TASK_STATE_WORKING,
		},
		{
			name:  "unknown",
			state: "unknown",
			want:  a2apb.TaskState_TASK_STATE_UNSPECIFIED,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := toProtoTaskState(tt.state); got != tt.want {
				t.Errorf("toProtoTaskState() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestToProto_toProtoTaskStatus(t *testing.T) {
	now := time.Now()
	pNow := timestamppb.New(now)
	msg := &a2a.Message{ID: "update-msg"}
	pMsg, _ := toProtoMessage(msg)

	tests := []struct {
		name    string
		status  a2a.TaskStatus
		want    *a2apb.TaskStatus
		wantErr bool
	}{
		{
			name: "full status",
			status: a2a.TaskStatus{
				State:     a2a.TaskStateWorking,
				Message:   msg,
				Timestamp: &now,
			},
			want: &a2apb.TaskStatus{
				State:     a2apb.TaskState_TASK_STATE_WORKING,
				Update:    pMsg,
				Timestamp: pNow,
			},
		},
		{
			name: "nil message",
			status: a2a.TaskStatus{
				State:     a2a.TaskStateCompleted,
				Timestamp: &now,
			},
			want: &a2apb.TaskStatus{
				State:     a2apb.TaskState_TASK_STATE_COMPLETED,
				Timestamp: pNow,
			},
		},
		{
			name: "nil timestamp",
			status: a2a.TaskStatus{
				State:   a2a.TaskStateWorking,
				Message: msg,
			},
			want: &a2apb.TaskStatus{
				State:  a2apb.TaskState_TASK_STATE_WORKING,
				Update: pMsg,
			},
		},
		{
			name: "minimal status",
			status: a2a.TaskStatus{
				State: a2a.TaskStateSubmitted,
			},
			want: &a2apb.TaskStatus{
				State: a2apb.TaskState_TASK_STATE_SUBMITTED,
			},
		},
		{
			name: "bad message conversion",
			status: a2a.TaskStatus{
				State: a2a.TaskStateWorking,
				Message: &a2a.Message{
					Metadata: map[string]any{"bad": func() {}}},
			},
			wantErr: true,
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toProtoTaskStatus(tt.status)
			if (err != nil) != tt.wantErr {
				t.Errorf("toProtoTaskStatus() error = %v, wantErr %v", err, tt.wantErr)
				return
			}
			if !tt.wantErr && !proto.Equal(got, tt.want) {
				t.Errorf("toProtoTaskStatus() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestToProto_toProtoTaskPushConfig(t *testing.T) {
	tests := []struct {
		name    string
		config  *a2a.PushConfig
		want    *a2apb.TaskPushNotificationConfig
		wantErr bool
	}{
		{
			name: "full config",
			config: &a2a.PushConfig{
				TaskID: "t1",
				ID:     "c1",
				URL:    "http://a.com",
				Token:  "tok",
				Auth: &a2a.PushAuthInfo{
					Scheme:      "Bearer",
					Credentials: "cred",
				},
			},
			want: &a2apb.TaskPushNotificationConfig{
				Name: "tasks/t1/pushNotificationConfigs/c1",
				PushNotificationConfig: &a2apb.PushNotificationConfig{
					Id:    "c1",
					Url:   "http://a.com",
					Token: "tok",
					Authentication: &a2apb.AuthenticationInfo{
						Schemes:     []string{"Bearer"},
						Credentials: "cred",
					},
				},
			},
		},
		{
			name: "config without auth",
			config: &a2a.PushConfig{
				TaskID: "t1",
				ID:     "c1",
				URL:    "http://a.com",
			},
			want: &a2apb.TaskPushNotificationConfig{
				Name: "tasks/t1/pushNotificationConfigs/c1",
				PushNotificationConfig: &a2apb.PushNotificationConfig{
					Id:  "c1",
					Url: "http://a.com",
				},
			},
		},
		{
			name:   "nil config",
			config: nil,
			want:   nil,
		},
		{
			name: "empty inner push config",
			config: &a2a.PushConfig{
				TaskID: "test-task",
				ID:     "",
			},
			want: &a2apb.TaskPushNotificationConfig{
				Name:                   "tasks/test-task/pushNotificationConfigs/",
				PushNotificationConfig: &a2apb.PushNotificationConfig{},
			},
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToProtoTaskPushConfig(tt.config)
			if (err != nil) != tt.wantErr {
				t.Errorf("toProtoTaskPushConfig() error = %v, wantErr %v", err, tt.wantErr)
				return
			}
			if !tt.wantErr && !proto.Equal(got, tt.want) {
				t.Errorf("toProtoTaskPushConfig() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestToProto_toProtoListTaskPushConfigResponse(t *testing.T) {
	configs := []*a2a.PushConfig{
		{TaskID: "test-task", ID: "test-config1"},
		{TaskID: "test-task", ID: "test-config2"},
	}
	pConf1, _ := ToProtoTaskPushConfig(configs[0])
	pConf2, _ := ToProtoTaskPushConfig(configs[1])

	tests := []struct {
		name    string
		resp    *a2a.ListTaskPushConfigResponse
		want    *a2apb.ListTaskPushNotificationConfigResponse
		wantErr bool
	}{
		{
			name: "success",
			resp: &a2a.ListTaskPushConfigResponse{
				Configs: []*a2a.PushConfig{
					configs[0],
					configs[1],
				},
			},
			want: &a2apb.ListTaskPushNotificationConfigResponse{
				Configs: []*a2apb.TaskPushNotificationConfig{pConf1, pConf2},
			},
		},
		{
			name: "empty slice",
			resp: &a2a.ListTaskPushConfigResponse{
				Configs: []*a2a.PushConfig{},
			},
			want: &a2apb.ListTaskPushNotificationConfigResponse{
				Configs: []*a2apb.TaskPushNotificationConfig{},
			},
		},
		{
			name: "conversion error",
			resp: &a2a.ListTaskPushConfigResponse{
				Configs: []*a2a.PushConfig{{TaskID: "", ID: "test"}},
			},
			wantErr: true,
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToProtoListTaskPushConfigResponse(tt.resp)
			if (err != nil) != tt.wantErr {
				t.Errorf("ToProtoListTaskPushConfigResponse() error = %v, wantErr %v", err, tt.wantErr)
				return
			}
			if !tt.wantErr && !proto.Equal(got, tt.want) {
				t.Errorf("ToProtoListTaskPushConfigResponse() got = %v, want %v", got, tt.want)
			}
		})
	}
}
func TestToProto_toProtoTask(t *testing.T) {
	now := time.Now()
	pNow := timestamppb.New(now)
	a2aTaskID := a2a.TaskID("task-test")
	a2aContextID := "ctx-test"
	a2aMsgID := "msg-test"
	a2aArtifactID := a2a.ArtifactID("art-abc")

	a2aMeta := map[string]any{"task_key": "task_val"}
	pMeta, _ := structpb.NewStruct(a2aMeta)

	a2aHistory := []*a2a.Message{
		{ID: a2aMsgID, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("history")}},
	}
	pHistory := []*a2apb.Message{
		{MessageId: a2aMsgID, Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Part: &a2apb.Part_Text{Text: "history"}}}},
	}

	a2aArtifacts := []*a2a.Artifact{
		{ID: a2aArtifactID, Name: "artifact1", Parts: a2a.ContentParts{a2a.NewTextPart("artifact content")}},
	}
	pArtifacts := []*a2apb.Artifact{
		{ArtifactId: string(a2aArtifactID), Name: "artifact1", Parts: []*a2apb.Part{{Part: &a2apb.Part_Text{Text: "artifact content"}}}},
	}

	a2aStatus := a2a.TaskStatus{
		State:     a2a.TaskStateWorking,
		Message:   &a2a.Message{ID: "status-msg", Role: a2a.MessageRoleAgent},
		Timestamp: &now,
	}
	pStatus := &a2apb.TaskStatus{
		State:     a2apb.TaskState_TASK_STATE_WORKING,
		Update:    &a2apb.Message{MessageId: "status-msg", Role: a2apb.Role_ROLE_AGENT},
		Timestamp: pNow,
	}

	tests := []struct {
		name    string
		task    *a2a.Task
		want    *a2apb.Task
		wantErr bool
	}{
		{
			name: "success",
			task: &a2a.Task{
				ID:        a2aTaskID,
				ContextID: a2aContextID,
				Status:    a2aStatus,
				Artifacts: a2aArtifacts,
				History:   a2aHistory,
				Metadata:  a2aMeta,
			},
			want: &a2apb.Task{
				Id:        string(a2aTaskID),
				ContextId: a2aContextID,
				Status:    pStatus,
				Artifacts: pArtifacts,
				History:   pHistory,
				Metadata:  pMeta,
			},
		},
		{
			name: "nil task",
			task: nil,
			want: nil,
		},
		{
			name: "bad status",
			task: &a2a.Task{
				ID:        a2aTaskID,
				ContextID: a2aContextID,
				Status: a2a.TaskStatus{
					State: a2a.TaskStateWorking,
					Message: &a2a.Message{
						Metadata: map[string]any{"bad": func() {}},
					},
					Timestamp: &now,
				},
				Artifacts: a2aArtifacts,
				History:   a2aHistory,
				Metadata:  a2aMeta,
			},
			wantErr: true,
		},
		{
			name: "bad artifact",
			task: &a2a.Task{
				ID:        a2aTaskID,
				ContextID: a2aContextID,
				Status:    a2aStatus,
				Artifacts: []*a2a.Artifact{
					{Metadata: map[string]any{"bad": func() {}}},
				},
				History:  a2aHistory,
				Metadata: a2aMeta,
			},
			wantErr: true,
		},
		{
			name: "bad history",
			task: &a2a.Task{
				ID:        a2aTaskID,
				ContextID: a2aContextID,
				Status:    a2aStatus,
				Artifacts: a2aArtifacts,
				History:   []*a2a.Message{{Metadata: map[string]any{"bad": func() {}}}},
				Metadata:  a2aMeta,
			},
			wantErr: true,
		},
		{
			name: "bad metadata",
			task: &a2a.Task{
				ID:        a2aTaskID,
				ContextID: a2aContextID,
				Status:    a2aStatus,
				Artifacts: a2aArtifacts,
				History:   a2aHistory,
				Metadata:  map[string]any{"bad": func() {}},
			},
			wantErr: true,
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToProtoTask(tt.task)
			if (err != nil) != tt.wantErr {
				t.Errorf("toProtoTask() error = %v, wantErr %v", err, tt.wantErr)
				return
			}
			if !tt.wantErr {
				if !proto.Equal(got, tt.want) {
					t.Errorf("toProtoTask() got = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestToProto_toProtoListTasksResponse(t *testing.T) {
	tests := []struct {
		name string
		list *a2a.ListTasksResponse
		want *a2apb.ListTasksResponse
	}{
		{
			name: "success",
			list: &a2a.ListTasksResponse{
				Tasks: []*a2a.Task{
					{
						ID:        a2a.TaskID("task-test"),
						ContextID: "ctx-test",
						Status:    a2a.TaskStatus{State: a2a.TaskStateWorking},
					},
				},
				NextPageToken: "next-page-token",
				TotalSize:     1,
			},
			want: &a2apb.ListTasksResponse{
				Tasks: []*a2apb.Task{
					{
						Id:        string(a2a.TaskID("task-test")),
						ContextId: "ctx-test",
						Status:    &a2apb.TaskStatus{State: a2apb.TaskState_TASK_STATE_WORKING},
					},
				},
				NextPageToken: "next-page-token",
				TotalSize:     1,
			},
		},
		{
			name: "nil list",
			list: nil,
			want: nil,
		},
		{
			name: "empty list",
			list: &a2a.ListTasksResponse{
				Tasks: []*a2a.Task{},
			},
			want: &a2apb.ListTasksResponse{
				Tasks: []*a2apb.Task{},
			},
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToProtoListTasksResponse(tt.list)
			if err != nil {
				t.Errorf("toProtoListTasksResponse() error = %v", err)
				return
			}
			if !proto.Equal(got, tt.want) {
				t.Errorf("toProtoListTasksResponse() got = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestToProto_toProtoAgentCard(t *testing.T) {
	a2aCard := &a2a.AgentCard{
		Name:        "Test Agent",
		Description: "An agent for testing.",
		SupportedInterfaces: []*a2a.AgentInterface{
			{ProtocolBinding: a2a.TransportProtocolGRPC, URL: "https://example.com/agent", ProtocolVersion: a2a.ProtocolVersion(a2av0.Version)},
			{ProtocolBinding: a2a.TransportProtocolJSONRPC, URL: "https://example.com/agent/jsonrpc", ProtocolVersion: a2a.ProtocolVersion(a2av0.Version)},
		},
		Provider: &a2a.AgentProvider{
			Org: "Test Org",
			URL: "https://example.com/org",
		},
		Version:          "0.1.0",
		DocumentationURL: "https://example.com/docs",
		Capabilities: a2a.AgentCapabilities{
			Streaming:         true,
			PushNotifications: true,
			ExtendedAgentCard: true,
			Extensions: []a2a.AgentExtension{
				{URI: "ext-uri", Description: "ext-desc", Required: true, Params: map[string]any{"key": "val"}},
			},
		},
		SecuritySchemes: a2a.NamedSecuritySchemes{
			"apiKey": a2a.APIKeySecurityScheme{
				Name:        "X-API-KEY",
				Location:    a2a.APIKeySecuritySchemeLocationHeader,
				Description: "API Key",
			},
			"oauth2": a2a.OAuth2SecurityScheme{
				Description:       "OAuth2",
				Oauth2MetadataURL: "https://example.com/oauth2/metadata",
				Flows: &a2a.AuthorizationCodeOAuthFlow{
					AuthorizationURL: "https://example.com/auth",
					TokenURL:         "https://example.com/token",
					Scopes:           map[string]string{"read": "read scope"},
				},
			},
		},
		SecurityRequirements: a2a.SecurityRequirementsOptions{
			map[a2a.SecuritySchemeName]a2a.SecuritySchemeScopes{
				a2a.SecuritySchemeName("apiKey"): {},
				a2a.SecuritySchemeName("oauth2"): {"read"},
			},
		},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{
			{
				ID:          "skill1",
				Name:        "Test Skill",
				Description: "A skill for testing.",
				Tags:        []string{"test"},
				Examples:    []string{"do a test"},
				InputModes:  []string{"text/markdown"},
				OutputModes: []string{"text/markdown"},
				SecurityRequirements: a2a.SecurityRequirementsOptions{
					map[a2a.SecuritySchemeName]a2a.SecuritySchemeScopes{
						a2a.SecuritySchemeName("apiKey"): {},
					},
				},
			},
		},
		Signatures: []a2a.AgentCardSignature{
			{Protected: "abc", Signature: "def", Header: map[string]any{"version": "1"}},
		},
		IconURL: "https://icons.com/icon.png",
	}

	extParams, _ := structpb.NewStruct(map[string]any{"key": "val"})
	pCard := &a2apb.AgentCard{
		ProtocolVersion:    string(a2av0.Version),
		Name:               "Test Agent",
		Description:        "An agent for testing.",
		Url:                "https://example.com/agent",
		PreferredTransport: string(a2a.TransportProtocolGRPC),
		AdditionalInterfaces: []*a2apb.AgentInterface{
			{Transport: string(a2a.TransportProtocolJSONRPC), Url: "https://example.com/agent/jsonrpc"},
		},
		Provider: &a2apb.AgentProvider{
			Organization: "Test Org",
			Url:          "https://example.com/org",
		},
		Version:          "0.1.0",
		DocumentationUrl: "https://example.com/docs",
		Capabilities: &a2apb.AgentCapabilities{
			Streaming:         true,
			PushNotifications: true,
			Extensions: []*a2apb.AgentExtension{
				{Uri: "ext-uri", Description: "ext-desc", Required: true, Params: extParams},
			},
		},
		SecuritySchemes: map[string]*a2apb.SecurityScheme{
			"apiKey": {
				Scheme: &a2apb.SecurityScheme_ApiKeySecurityScheme{
					ApiKeySecurityScheme: &a2apb.APIKeySecurityScheme{
						Name:        "X-API-KEY",
						Location:    string(a2a.APIKeySecuritySchemeLocationHeader),
						Description: "API Key",
					},
				},
			},
			"oauth2": {
				Scheme: &a2apb.SecurityScheme_Oauth2SecurityScheme{
					Oauth2SecurityScheme: &a2apb.OAuth2SecurityScheme{
						Description:       "OAuth2",
						Oauth2MetadataUrl: "https://example.com/oauth2/metadata",
						Flows: &a2apb.OAuthFlows{
							Flow: &a2apb.OAuthFlows_AuthorizationCode{
								AuthorizationCode: &a2apb.AuthorizationCodeOAuthFlow{
									AuthorizationUrl: "https://example.com/auth",
									TokenUrl:         "https://example.com/token",
									Scopes:           map[string]string{"read": "read scope"},
								},
							},
						},
					},
				},
			},
		},
		Security: []*a2apb.Security{
			{Schemes: map[string]*a2apb.StringList{
				"apiKey": {List: []string{}},
				"oauth2": {List: []string{"read"}},
			}},
		},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2apb.AgentSkill{
			{
				Id:          "skill1",
				Name:        "Test Skill",
				Description: "A skill for testing.",
				Tags:        []string{"test"},
				Examples:    []string{"do a test"},
				InputModes:  []string{"text/markdown"},
				OutputModes: []string{"text/markdown"},
				Security: []*a2apb.Security{
					{Schemes: map[string]*a2apb.StringList{"apiKey": {List: []string{}}}},
				},
			},
		},
		Signatures: []*a2apb.AgentCardSignature{
			{Protected: "abc", Signature: "def", Header: mustMakeProtoMetadata(t, map[string]any{"version": "1"})},
		},
		IconUrl:                           "https://icons.com/icon.png",
		SupportsAuthenticatedExtendedCard: true,
	}

	tests := []struct {
		name    string
		card    *a2a.AgentCard
		want    *a2apb.AgentCard
		wantErr bool
	}{
		{
			name: "success",
			card: a2aCard,
			want: pCard,
		},
		{
			name: "nil card",
			card: nil,
			want: nil,
		},
		{
			name: "bad capabilities",
			card: &a2a.AgentCard{
				Capabilities: a2a.AgentCapabilities{
					Extensions: []a2a.AgentExtension{
						{Params: map[string]any{"bad": func() {}}},
					},
				},
			},
			wantErr: true,
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToProtoAgentCard(tt.card)
			if (err != nil) != tt.wantErr {
				t.Errorf("toProtoAgentCard() error = %v, wantErr %v", err, tt.wantErr)
				return
			}
			if tt.wantErr {
				return
			}
			if !proto.Equal(got, tt.want) {
				t.Errorf("toProtoAgentCard() got = %v, want %v", got, tt.want)
			}
			gotBack, err := FromProtoAgentCard(got)
			if err != nil {
				t.Errorf("FromProtoAgentCard() error = %v", err)
			}
			if diff := cmp.Diff(tt.card, gotBack); diff != "" {
				t.Errorf("FromProtoAgentCard() wrong result (-want +got):\ndiff = %s", diff)
			}
		})
	}
}

func TestToProto_toProtoOAuthFlows(t *testing.T) {
	tests := []struct {
		name    string
		flows   a2a.OAuthFlows
		want    *a2apb.OAuthFlows
		wantErr bool
	}{
		{
			name: "authorization code flow",
			flows: &a2a.AuthorizationCodeOAuthFlow{
				AuthorizationURL: "https://auth.com/auth",
				TokenURL:         "https://auth.com/token",
				RefreshURL:       "https://auth.com/refresh",
				Scopes:           map[string]string{"read": "read data"},
			},
			want: &a2apb.OAuthFlows{
				Flow: &a2apb.OAuthFlows_AuthorizationCode{
					AuthorizationCode: &a2apb.AuthorizationCodeOAuthFlow{
						AuthorizationUrl: "https://auth.com/auth",
						TokenUrl:         "https://auth.com/token",
						RefreshUrl:       "https://auth.com/refresh",
						Scopes:           map[string]string{"read": "read data"},
					},
				},
			},
		},
		{
			name: "client credentials flow",
			flows: &a2a.ClientCredentialsOAuthFlow{
				TokenURL:   "https://auth.com/token",
				RefreshURL: "https://auth.com/refresh",
				Scopes:     map[string]string{"write": "write data"},
			},
			want: &a2apb.OAuthFlows{
				Flow: &a2apb.OAuthFlows_ClientCredentials{
					ClientCredentials: &a2apb.ClientCredentialsOAuthFlow{
						TokenUrl:   "https://auth.com/token",
						RefreshUrl: "https://auth.com/refresh",
						Scopes:     map[string]string{"write": "write data"},
					},
				},
			},
		},
		{
			name: "implicit flow",
			flows: &a2a.ImplicitOAuthFlow{
				AuthorizationURL: "https://auth.com/auth",
				RefreshURL:       "https://auth.com/refresh",
				Scopes:           map[string]string{"profile": "read profile"},
			},
			want: &a2apb.OAuthFlows{
				Flow: &a2apb.OAuthFlows_Implicit{
					Implicit: &a2apb.ImplicitOAuthFlow{
						AuthorizationUrl: "https://auth.com/auth",
						RefreshUrl:       "https://auth.com/refresh",
						Scopes:           map[string]string{"profile": "read profile"},
					},
				},
			},
		},
		{
			name: "password flow",
			flows: &a2a.PasswordOAuthFlow{
				TokenURL:   "https://auth.com/token",
				RefreshURL: "https://auth.com/refresh",
				Scopes:     map[string]string{"user": "user info"},
			},
			want: &a2apb.OAuthFlows{
				Flow: &a2apb.OAuthFlows_Password{
					Password: &a2apb.PasswordOAuthFlow{
						TokenUrl:   "https://auth.com/token",
						RefreshUrl: "https://auth.com/refresh",
						Scopes:     map[string]string{"user": "user info"},
					},
				},
			},
		},
		{
			name:    "no flows specified",
			flows:   nil,
			wantErr: true,
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toProtoOAuthFlows(tt.flows)
			if (err != nil) != tt.wantErr {
				t.Errorf("toProtoOAuthFlows() error = %v, wantErr %v", err, tt.wantErr)
				return
			}
			if !tt.wantErr {
				if !proto.Equal(got, tt.want) {
					t.Errorf("toProtoOAuthFlows() got = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestToProto_toProtoSecurityScheme(t *testing.T) {
	tests := []struct {
		name    string
		scheme  a2a.SecurityScheme
		want    *a2apb.SecurityScheme
		wantErr bool
	}{
		{
			name: "api key scheme",
			scheme: a2a.APIKeySecurityScheme{
				Name:        "X-API-KEY",
				Location:    a2a.APIKeySecuritySchemeLocationHeader,
				Description: "API Key",
			},
			want: &a2apb.SecurityScheme{
				Scheme: &a2apb.SecurityScheme_ApiKeySecurityScheme{
					ApiKeySecurityScheme: &a2apb.APIKeySecurityScheme{
						Name:        "X-API-KEY",
						Location:    string(a2a.APIKeySecuritySchemeLocationHeader),
						Description: "API Key",
					},
				},
			},
		},
		{
			name: "http auth scheme",
			scheme: a2a.HTTPAuthSecurityScheme{
				Scheme:       "Bearer",
				BearerFormat: "JWT",
				Description:  "HTTP Bearer",
			},
			want: &a2apb.SecurityScheme{
				Scheme: &a2apb.SecurityScheme_HttpAuthSecurityScheme{
					HttpAuthSecurityScheme: &a2apb.HTTPAuthSecurityScheme{
						Scheme:       "Bearer",
						BearerFormat: "JWT",
						Description:  "HTTP Bearer",
					},
				},
			},
		},
		{
			name: "openid connect scheme",
			scheme: a2a.OpenIDConnectSecurityScheme{
				OpenIDConnectURL: "https://oidc.com/.well-known",
				Description:      "OIDC",
			},
			want: &a2apb.SecurityScheme{
				Scheme: &a2apb.SecurityScheme_OpenIdConnectSecurityScheme{
					OpenIdConnectSecurityScheme: &a2apb.OpenIdConnectSecurityScheme{
						OpenIdConnectUrl: "https://oidc.com/.well-known",
						Description:      "OIDC",
					},
				},
			},
		},
		{
			name:   "mutual tls scheme",
			scheme: a2a.MutualTLSSecurityScheme{},
			want: &a2apb.SecurityScheme{
				Scheme: &a2apb.SecurityScheme_MtlsSecurityScheme{
					MtlsSecurityScheme: &a2apb.MutualTlsSecurityScheme{},
				},
			},
		},
		{
			name: "oauth2 scheme",
			scheme: a2a.OAuth2SecurityScheme{
				Description: "OAuth2",
				Flows: &a2a.AuthorizationCodeOAuthFlow{
					AuthorizationURL: "https://auth.com/auth",
					TokenURL:         "https://auth.com/token",
					Scopes:           map[string]string{"read": "read data"},
				},
			},
			want: &a2apb.SecurityScheme{
				Scheme: &a2apb.SecurityScheme_Oauth2SecurityScheme{
					Oauth2SecurityScheme: &a2apb.OAuth2SecurityScheme{
						Description: "OAuth2",
						Flows: &a2apb.OAuthFlows{
							Flow: &a2apb.OAuthFlows_AuthorizationCode{
								AuthorizationCode: &a2apb.AuthorizationCodeOAuthFlow{
									AuthorizationUrl: "https://auth.com/auth",
									TokenUrl:         "https://auth.com/token",
									Scopes:           map[string]string{"read": "read data"},
								},
							},
						},
					},
				},
			},
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toProtoSecurityScheme(tt.scheme)
			if (err != nil) != tt.wantErr {
				t.Errorf("toProtoSecurityScheme() error = %v, wantErr %v", err, tt.wantErr)
				return
			}
			if !tt.wantErr {
				if !proto.Equal(got, tt.want) {
					t.Errorf("toProtoSecurityScheme() got = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestToProto_toProtoSendMessageResponse(t *testing.T) {
	a2aMsg := &a2a.Message{
		ID:    "test-message",
		Role:  a2a.MessageRoleAgent,
		Parts: a2a.ContentParts{a2a.NewTextPart("response")},
	}
	pMsg := &a2apb.Message{
		MessageId: "test-message",
		Role:      a2apb.Role_ROLE_AGENT,
		Parts: []*a2apb.Part{
			{Part: &a2apb.Part_Text{Text: "response"}},
		},
	}

	now := time.Now()
	a2aTask := &a2a.Task{
		ID:        "test-task",
		ContextID: "test-ctx",
		Status: a2a.TaskStatus{
			State:     a2a.TaskStateCompleted,
			Timestamp: &now,
			Message:   a2aMsg,
		},
	}
	pTask := &a2apb.Task{
		Id:        "test-task",
		ContextId: "test-ctx",
		Status: &a2apb.TaskStatus{
			State:     a2apb.TaskState_TASK_STATE_COMPLETED,
			Timestamp: timestamppb.New(now),
			Update:    pMsg,
		},
	}

	tests := []struct {
		name    string
		result  a2a.SendMessageResult
		want    *a2apb.SendMessageResponse
		wantErr bool
	}{
		{
			name:   "message response",
			result: a2aMsg,
			want: &a2apb.SendMessageResponse{
				Payload: &a2apb.SendMessageResponse_Msg{Msg: pMsg},
			},
		},
		{
			name:   "task response",
			result: a2aTask,
			want: &a2apb.SendMessageResponse{
				Payload: &a2apb.SendMessageResponse_Task{Task: pTask},
			},
		},
		{
			name:    "nil result",
			result:  nil,
			wantErr: true,
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToProtoSendMessageResponse(tt.result)
			if (err != nil) != tt.wantErr {
				t.Errorf("toProtoSendMessageResponse() error = %v, wantErr %v", err, tt.wantErr)
				return
			}
			if !tt.wantErr {
				if !proto.Equal(got, tt.want) {
					t.Errorf("toProtoSendMessageResponse() got = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestToProto_toProtoStreamResponse(t *testing.T) {
	now := time.Now()
	pNow := timestamppb.New(now)
	a2aMsg := &a2a.Message{ID: "test-message"}
	pMsg, _ := toProtoMessage(a2aMsg)
	a2aTask := &a2a.Task{ID: "test-task", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	pTask, _ := ToProtoTask(a2aTask)
	a2aStatusEvent := &a2a.TaskStatusUpdateEvent{
		TaskID:    "test-task",
		ContextID: "test-ctx",
		Status: a2a.TaskStatus{
			State:     a2a.TaskStateCompleted,
			Timestamp: &now,
		},
	}
	pStatusEvent := &a2apb.StreamResponse_StatusUpdate{
		StatusUpdate: &a2apb.TaskStatusUpdateEvent{
			TaskId:    "test-task",
			ContextId: "test-ctx",
			Status: &a2apb.TaskStatus{
				State:     a2apb.TaskState_TASK_STATE_COMPLETED,
				Timestamp: pNow,
			},
		},
	}
	a2aArtifactEvent := &a2a.TaskArtifactUpdateEvent{
		TaskID:    "test-task",
		ContextID: "test-ctx",
		Artifact:  &a2a.Artifact{ID: "art1"},
	}
	pArtifactEvent := &a2apb.StreamResponse_ArtifactUpdate{
		ArtifactUpdate: &a2apb.TaskArtifactUpdateEvent{
			TaskId:    "test-task",
			ContextId: "test-ctx",
			Artifact:  &a2apb.Artifact{ArtifactId: "art1"},
		},
	}

	tests := []struct {
		name    string
		event   a2a.Event
		want    *a2apb.StreamResponse
		wantErr bool
	}{
		{
			name:  "message",
			event: a2aMsg,
			want: &a2apb.StreamResponse{
				Payload: &a2apb.StreamResponse_Msg{Msg: pMsg},
			},
		},
		{
			name:  "task",
			event: a2aTask,
			want: &a2apb.StreamResponse{
				Payload: &a2apb.StreamResponse_Task{Task: pTask},
			},
		},
		{
			name:  "status update",
			event: a2aStatusEvent,
			want:  &a2apb.StreamResponse{Payload: pStatusEvent},
		},
		{
			name:  "artifact update",
			event: a2aArtifactEvent,
			want:  &a2apb.StreamResponse{Payload: pArtifactEvent},
		},
		{
			name:    "nil event",
			event:   nil,
			wantErr: true,
		},
		{
			name: "bad message",
			event: &a2a.Message{
				Metadata: map[string]any{"bad": func() {}},
			},
			wantErr: true,
		},
		{
			name: "bad task",
			event: &a2a.Task{
				Metadata: map[string]any{"bad": func() {}},
			},
			wantErr: true,
		},
		{
			name: "bad status update",
			event: &a2a.TaskStatusUpdateEvent{
				Metadata: map[string]any{"bad": func() {}},
			},
			wantErr: true,
		},
		{
			name: "bad artifact update",
			event: &a2a.TaskArtifactUpdateEvent{
				Metadata: map[string]any{"bad": func() {}},
			},
			wantErr: true,
		},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToProtoStreamResponse(tt.event)
			if (err != nil) != tt.wantErr {
				t.Errorf("toProtoStreamResponse() error = %v, wantErr %v", err, tt.wantErr)
				return
			}
			if !tt.wantErr && !proto.Equal(got, tt.want) {
				t.Errorf("toProtoStreamResponse() = %v, want %v", got, tt.want)
			}
		})
	}
}
