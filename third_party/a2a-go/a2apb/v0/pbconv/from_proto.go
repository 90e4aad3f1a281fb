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
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/a2apb"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	structpb "google.golang.org/protobuf/types/known/structpb"
)

func fromProtoMap(meta *structpb.Struct) map[string]any {
	if meta == nil {
		return nil
	}
	return meta.AsMap()
}

// FromProtoSendMessageRequest converts a [a2apb.SendMessageRequest] to a [a2a.SendMessageRequest].
func FromProtoSendMessageRequest(req *a2apb.SendMessageRequest) (*a2a.SendMessageRequest, error) {
	if req == nil {
		return nil, nil
	}

	msg, err := FromProtoMessage(req.GetRequest())
	if err != nil {
		return nil, err
	}

	config, err := fromProtoSendMessageConfig(req.GetConfiguration())
	if err != nil {
		return nil, err
	}

	return &a2a.SendMessageRequest{
		Message:  msg,
		Config:   config,
		Metadata: fromProtoMap(req.GetMetadata()),
	}, nil
}

// FromProtoMessage converts a [a2apb.Message] to a [a2a.Message].
func FromProtoMessage(pMsg *a2apb.Message) (*a2a.Message, error) {
	if pMsg == nil {
		return nil, nil
	}

	parts, err := fromProtoParts(pMsg.GetParts())
	if err != nil {
		return nil, err
	}

	msg := &a2a.Message{
		ID:         pMsg.GetMessageId(),
		ContextID:  pMsg.GetContextId(),
		Extensions: pMsg.GetExtensions(),
		Parts:      parts,
		TaskID:     a2a.TaskID(pMsg.GetTaskId()),
		Role:       fromProtoRole(pMsg.GetRole()),
		Metadata:   fromProtoMap(pMsg.GetMetadata()),
	}

	taskIDs := pMsg.GetReferenceTaskIds()
	if taskIDs != nil {
		msg.ReferenceTasks = make([]a2a.TaskID, len(taskIDs))
		for i, tid := range taskIDs {
			msg.ReferenceTasks[i] = a2a.TaskID(tid)
		}
	}

	return msg, nil
}

func fromProtoFilePart(pPart *a2apb.FilePart, meta map[string]any) (a2a.Part, error) {
	switch f := pPart.GetFile().(type) {
	case *a2apb.FilePart_FileWithBytes:
		buf := make([]byte, base64.StdEncoding.DecodedLen(len(f.FileWithBytes)))
		n, err := base64.StdEncoding.Decode(buf, []byte(f.FileWithBytes))
		if err != nil {
			return a2a.Part{}, fmt.Errorf("failed to decode base64 string: %w", err)
		}
		b := buf[:n]
		return a2a.Part{
			Content:   a2a.Raw(b),
			MediaType: pPart.GetMimeType(),
			Filename:  pPart.GetName(),
			Metadata:  meta,
		}, nil
	case *a2apb.FilePart_FileWithUri:
		return a2a.Part{
			Content:   a2a.URL(f.FileWithUri),
			MediaType: pPart.GetMimeType(),
			Filename:  pPart.GetName(),
			Metadata:  meta,
		}, nil
	default:
		return a2a.Part{}, fmt.Errorf("unsupported FilePart type: %T", f)
	}
}

func fromProtoPart(p *a2apb.Part) (a2a.Part, error) {
	meta := fromProtoMap(p.Metadata)
	switch part := p.GetPart().(type) {
	case *a2apb.Part_Text:
		return a2a.Part{Content: a2a.Text(part.Text), Metadata: meta}, nil
	case *a2apb.Part_Data:
		var val any = part.Data.GetData().AsMap()
		if compat, ok := meta["data_part_compat"].(bool); ok && compat {
			if m, ok := val.(map[string]any); ok {
				val = m["value"]
				delete(meta, "data_part_compat")
			}
		}
		return a2a.Part{Content: a2a.Data{Value: val}, Metadata: meta}, nil
	case *a2apb.Part_File:
		return fromProtoFilePart(part.File, meta)
	default:
		return a2a.Part{}, fmt.Errorf("unsupported part type: %T", part)
	}
}

func fromProtoRole(role a2apb.Role) a2a.MessageRole {
	switch role {
	case a2apb.Role_ROLE_USER:
		return a2a.MessageRoleUser
	case a2apb.Role_ROLE_AGENT:
		return a2a.MessageRoleAgent
	default:
		return a2a.MessageRoleUnspecified
	}
}

func fromProtoPushConfig(pConf *a2apb.PushNotificationConfig) (*a2a.PushConfig, error) {
	if pConf == nil {
		return nil, nil
	}

	result := &a2a.PushConfig{
		ID:    pConf.GetId(),
		URL:   pConf.GetUrl(),
		Token: pConf.GetToken(),
	}
	if auth := pConf.GetAuthentication(); auth != nil && len(auth.GetSchemes()) > 0 {
		result.Auth = &a2a.PushAuthInfo{
			Scheme:      auth.GetSchemes()[0],
			Credentials: auth.GetCredentials(),
		}
	}
	return result, nil
}

func fromProtoSendMessageConfig(conf *a2apb.SendMessageConfiguration) (*a2a.SendMessageConfig, error) {
	if conf == nil {
		return nil, nil
	}

	pConf, err := fromProtoPushConfig(conf.GetPushNotification())
	if err != nil {
		return nil, fmt.Errorf("failed to convert push config: %w", err)
	}

	result := &a2a.SendMessageConfig{
		AcceptedOutputModes: conf.GetAcceptedOutputModes(),
		ReturnImmediately:   !conf.GetBlocking(),
		PushConfig:          pConf,
	}

	// TODO: consider the approach after resolving https://github.com/a2aproject/A2A/issues/1072
	if conf.HistoryLength > 0 {
		hl := int(conf.HistoryLength)
		result.HistoryLength = &hl
	}
	return result, nil
}

// FromProtoGetTaskRequest converts a [a2apb.GetTaskRequest] to a [a2a.GetTaskRequest].
func FromProtoGetTaskRequest(req *a2apb.GetTaskRequest) (*a2a.GetTaskRequest, error) {
	if req == nil {
		return nil, nil
	}

	// TODO: consider throwing an error when the path - req.GetName() is unexpected, e.g. tasks/taskID/someExtraText
	taskID, err := ExtractTaskID(req.GetName())
	if err != nil {
		return nil, fmt.Errorf("failed to extract task id: %w", err)
	}

	request := &a2a.GetTaskRequest{ID: taskID}
	if req.GetHistoryLength() > 0 {
		historyLength := int(req.GetHistoryLength())
		request.HistoryLength = &historyLength
	}
	return request, nil
}

// FromProtoListTasksRequest converts a [a2apb.ListTasksRequest] to a [a2a.ListTasksRequest].
func FromProtoListTasksRequest(req *a2apb.ListTasksRequest) (*a2a.ListTasksRequest, error) {
	if req == nil {
		return nil, nil
	}

	var lastUpdatedAfter *time.Time
	if req.GetLastUpdatedTime() != nil {
		t := req.GetLastUpdatedTime().AsTime()
		lastUpdatedAfter = &t
	}

	var status a2a.TaskState
	if req.GetStatus() != 0 {
		status = fromProtoTaskState(req.GetStatus())
	}

	request := &a2a.ListTasksRequest{
		ContextID:            req.GetContextId(),
		Status:               status,
		PageSize:             int(req.GetPageSize()),
		PageToken:            req.GetPageToken(),
		StatusTimestampAfter: lastUpdatedAfter,
		IncludeArtifacts:     req.GetIncludeArtifacts(),
	}

	if req.HistoryLength > 0 {
		hl := int(req.HistoryLength)
		request.HistoryLength = &hl
	}

	return request, nil
}

// FromProtoListTasksResponse converts a [a2apb.ListTasksResponse] to a [a2a.ListTasksResponse].
func FromProtoListTasksResponse(resp *a2apb.ListTasksResponse) (*a2a.ListTasksResponse, error) {
	if resp == nil {
		return nil, nil
	}

	var tasks []*a2a.Task
	for _, task := range resp.GetTasks() {
		t, err := FromProtoTask(task)
		if err != nil {
			return nil, fmt.Errorf("failed to convert task: %w", err)
		}
		tasks = append(tasks, t)
	}

	return &a2a.ListTasksResponse{
		Tasks:         tasks,
		TotalSize:     int(resp.GetTotalSize()),
		PageSize:      len(tasks),
		NextPageToken: resp.GetNextPageToken(),
	}, nil
}

// FromProtoCreateTaskPushConfigRequest converts a [a2apb.CreateTaskPushNotificationConfigRequest] to a [a2a.CreateTaskPushConfigRequest].
func FromProtoCreateTaskPushConfigRequest(req *a2apb.CreateTaskPushNotificationConfigRequest) (*a2a.PushConfig, error) {
	if req == nil {
		return nil, nil
	}

	config := req.GetConfig()
	if config.GetPushNotificationConfig() == nil {
		return nil, fmt.Errorf("invalid config")
	}

	pConf, err := fromProtoPushConfig(config.GetPushNotificationConfig())
	if err != nil {
		return nil, fmt.Errorf("failed to convert push config: %w", err)
	}

	taskID, err := ExtractTaskID(req.GetParent())
	if err != nil {
		return nil, fmt.Errorf("failed to extract task id: %w", err)
	}

	return &a2a.PushConfig{TaskID: taskID, ID: pConf.ID, URL: pConf.URL, Token: pConf.Token, Auth: pConf.Auth}, nil
}

// FromProtoGetTaskPushConfigRequest converts a [a2apb.GetTaskPushNotificationConfigRequest] to a [a2a.GetTaskPushConfigRequest].
func FromProtoGetTaskPushConfigRequest(req *a2apb.GetTaskPushNotificationConfigRequest) (*a2a.GetTaskPushConfigRequest, error) {
	if req == nil {
		return nil, nil
	}

	taskID, err := ExtractTaskID(req.GetName())
	if err != nil {
		return nil, fmt.Errorf("failed to extract task id: %w", err)
	}

	configID, err := ExtractConfigID(req.GetName())
	if err != nil {
		return nil, fmt.Errorf("failed to extract config id: %w", err)
	}

	return &a2a.GetTaskPushConfigRequest{TaskID: taskID, ID: configID}, nil
}

// FromProtoDeleteTaskPushConfigRequest converts a [a2apb.DeleteTaskPushNotificationConfigRequest] to a [a2a.DeleteTaskPushConfigRequest].
func FromProtoDeleteTaskPushConfigRequest(req *a2apb.DeleteTaskPushNotificationConfigRequest) (*a2a.DeleteTaskPushConfigRequest, error) {
	if req == nil {
		return nil, nil
	}

	taskID, err := ExtractTaskID(req.GetName())
	if err != nil {
		return nil, fmt.Errorf("failed to extract task id: %w", err)
	}

	configID, err := ExtractConfigID(req.GetName())
	if err != nil {
		return nil, fmt.Errorf("failed to extract config id: %w", err)
	}

	return &a2a.DeleteTaskPushConfigRequest{TaskID: taskID, ID: configID}, nil
}

// FromProtoSendMessageResponse converts a [a2apb.SendMessageResponse] to a [a2a.SendMessageResult].
func FromProtoSendMessageResponse(resp *a2apb.SendMessageResponse) (a2a.SendMessageResult, error) {
	if resp == nil {
		return nil, nil
	}

	switch p := resp.Payload.(type) {
	case *a2apb.SendMessageResponse_Msg:
		return FromProtoMessage(p.Msg)
	case *a2apb.SendMessageResponse_Task:
		return FromProtoTask(p.Task)
	default:
		return nil, fmt.Errorf("unsupported SendMessageResponse payload type: %T", resp.Payload)
	}
}

// FromProtoStreamResponse converts a [a2apb.StreamResponse] to a [a2a.Event].
func FromProtoStreamResponse(resp *a2apb.StreamResponse) (a2a.Event, error) {
	if resp == nil {
		return nil, nil
	}

	switch p := resp.Payload.(type) {
	case *a2apb.StreamResponse_Msg:
		return FromProtoMessage(p.Msg)
	case *a2apb.StreamResponse_Task:
		return FromProtoTask(p.Task)
	case *a2apb.StreamResponse_StatusUpdate:
		status, err := fromProtoTaskStatus(p.StatusUpdate.GetStatus())
		if err != nil {
			return nil, err
		}
		return &a2a.TaskStatusUpdateEvent{
			ContextID: p.StatusUpdate.GetContextId(),
			Status:    status,
			TaskID:    a2a.TaskID(p.StatusUpdate.GetTaskId()),
			Metadata:  fromProtoMap(p.StatusUpdate.GetMetadata()),
		}, nil
	case *a2apb.StreamResponse_ArtifactUpdate:
		artifact, err := fromProtoArtifact(p.ArtifactUpdate.GetArtifact())
		if err != nil {
			return nil, err
		}
		return &a2a.TaskArtifactUpdateEvent{
			Append:    p.ArtifactUpdate.GetAppend(),
			Artifact:  artifact,
			ContextID: p.ArtifactUpdate.GetContextId(),
			LastChunk: p.ArtifactUpdate.GetLastChunk(),
			TaskID:    a2a.TaskID(p.ArtifactUpdate.GetTaskId()),
			Metadata:  fromProtoMap(p.ArtifactUpdate.GetMetadata()),
		}, nil
	default:
		return nil, fmt.Errorf("unsupported StreamResponse payload type: %T", resp.Payload)
	}
}

func fromProtoMessages(pMsgs []*a2apb.Message) ([]*a2a.Message, error) {
	msgs := make([]*a2a.Message, len(pMsgs))
	for i, pMsg := range pMsgs {
		msg, err := FromProtoMessage(pMsg)
		if err != nil {
			return nil, fmt.Errorf("failed to convert message: %w", err)
		}
		msgs[i] = msg
	}
	return msgs, nil
}

func fromProtoParts(pParts []*a2apb.Part) ([]*a2a.Part, error) {
	parts := make([]*a2a.Part, len(pParts))
	for i, pPart := range pParts {
		part, err := fromProtoPart(pPart)
		if err != nil {
			return nil, fmt.Errorf("failed to convert part: %w", err)
		}
		parts[i] = &part
	}
	return parts, nil
}

func fromProtoTaskState(state a2apb.TaskState) a2a.TaskState {
	switch state {
	case a2apb.TaskState_TASK_STATE_AUTH_REQUIRED:
		return a2a.TaskStateAuthRequired
	case a2apb.TaskState_TASK_STATE_CANCELLED:
		return a2a.TaskStateCanceled
	case a2apb.TaskState_TASK_STATE_COMPLETED:
		return a2a.TaskStateCompleted
	case a2apb.TaskState_TASK_STATE_FAILED:
		return a2a.TaskStateFailed
	case a2apb.TaskState_TASK_STATE_INPUT_REQUIRED:
		return a2a.TaskStateInputRequired
	case a2apb.TaskState_TASK_STATE_REJECTED:
		return a2a.TaskStateRejected
	case a2apb.TaskState_TASK_STATE_SUBMITTED:
		return a2a.TaskStateSubmitted
	case a2apb.TaskState_TASK_STATE_WORKING:
		return a2a.TaskStateWorking
	default:
		return a2a.TaskStateUnspecified
	}
}

func fromProtoTaskStatus(pStatus *a2apb.TaskStatus) (a2a.TaskStatus, error) {
	if pStatus == nil {
		return a2a.TaskStatus{}, fmt.Errorf("invalid status")
	}

	message, err := FromProtoMessage(pStatus.GetUpdate())
	if err != nil {
		return a2a.TaskStatus{}, fmt.Errorf("failed to convert message for task status: %w", err)
	}

	status := a2a.TaskStatus{
		State:   fromProtoTaskState(pStatus.GetState()),
		Message: message,
	}

	if pStatus.Timestamp != nil {
		t := pStatus.Timestamp.AsTime()
		status.Timestamp = &t
	}

	return status, nil
}

func fromProtoArtifact(pArtifact *a2apb.Artifact) (*a2a.Artifact, error) {
	if pArtifact == nil {
		return nil, nil
	}

	parts, err := fromProtoParts(pArtifact.GetParts())
	if err != nil {
		return nil, fmt.Errorf("failed to convert from proto parts: %w", err)
	}

	return &a2a.Artifact{
		ID:          a2a.ArtifactID(pArtifact.GetArtifactId()),
		Name:        pArtifact.GetName(),
		Description: pArtifact.GetDescription(),
		Parts:       parts,
		Extensions:  pArtifact.GetExtensions(),
		Metadata:    fromProtoMap(pArtifact.GetMetadata()),
	}, nil
}

func fromProtoArtifacts(pArtifacts []*a2apb.Artifact) ([]*a2a.Artifact, error) {
	result := make([]*a2a.Artifact, len(pArtifacts))
	for i, pArtifact := range pArtifacts {
		artifact, err := fromProtoArtifact(pArtifact)
		if err != nil {
			return nil, fmt.Errorf("failed to convert artifact: %w", err)
		}
		result[i] = artifact
	}
	return result, nil
}

// FromProtoTask converts a [a2apb.Task] to a [a2a.Task].
func FromProtoTask(pTask *a2apb.Task) (*a2a.Task, error) {
	if pTask == nil {
		return nil, nil
	}

	status, err := fromProtoTaskStatus(pTask.Status)
	if err != nil {
		return nil, fmt.Errorf("failed to convert status: %w", err)
	}

	artifacts, err := fromProtoArtifacts(pTask.Artifacts)
	if err != nil {
		return nil, fmt.Errorf("failed to convert artifacts: %w", err)
	}

	history, err := fromProtoMessages(pTask.History)
	if err != nil {
		return nil, fmt.Errorf("failed to convert history: %w", err)
	}

	result := &a2a.Task{
		ID:        a2a.TaskID(pTask.GetId()),
		ContextID: pTask.GetContextId(),
		Status:    status,
		Artifacts: artifacts,
		History:   history,
		Metadata:  fromProtoMap(pTask.GetMetadata()),
	}

	return result, nil
}

// FromProtoTaskPushConfig converts a [a2apb.TaskPushNotificationConfig] to a [a2a.PushConfig].
func FromProtoTaskPushConfig(pTaskConfig *a2apb.TaskPushNotificationConfig) (*a2a.PushConfig, error) {
	if pTaskConfig == nil {
		return nil, nil
	}

	taskID, err := ExtractTaskID(pTaskConfig.GetName())
	if err != nil {
		return nil, fmt.Errorf("failed to extract task id: %w", err)
	}

	configID, err := ExtractConfigID(pTaskConfig.GetName())
	if err != nil {
		return nil, fmt.Errorf("failed to extract config id: %w", err)
	}

	pConf := pTaskConfig.GetPushNotificationConfig()
	if pConf == nil {
		return nil, fmt.Errorf("push notification config is nil")
	}

	if pConf.GetId() != configID {
		return nil, fmt.Errorf("config id mismatch: %q != %q", pConf.GetId(), configID)
	}

	config, err := fromProtoPushConfig(pConf)
	if err != nil {
		return nil, fmt.Errorf("failed to convert push config: %w", err)
	}

	return &a2a.PushConfig{TaskID: taskID, ID: config.ID, URL: config.URL, Token: config.Token, Auth: config.Auth}, nil
}

// FromProtoListTaskPushConfigRequest converts a [a2apb.ListTaskPushNotificationConfigRequest] to a [a2a.ListTaskPushConfigRequest].
func FromProtoListTaskPushConfigRequest(req *a2apb.ListTaskPushNotificationConfigRequest) (*a2a.ListTaskPushConfigRequest, error) {
	if req == nil {
		return nil, fmt.Errorf("request is nil")
	}

	taskID, err := ExtractTaskID(req.GetParent())
	if err != nil {
		return nil, fmt.Errorf("failed to extract task id: %w", err)
	}

	return &a2a.ListTaskPushConfigRequest{
		TaskID:    taskID,
		PageToken: req.GetPageToken(),
		PageSize:  int(req.GetPageSize()),
	}, nil
}

// FromProtoListTaskPushConfigResponse converts a [a2apb.ListTaskPushNotificationConfigResponse] to a [a2a.ListTaskPushConfigResponse].
func FromProtoListTaskPushConfigResponse(resp *a2apb.ListTaskPushNotificationConfigResponse) (*a2a.ListTaskPushConfigResponse, error) {
	if resp == nil {
		return nil, fmt.Errorf("response is nil")
	}

	configs := make([]*a2a.PushConfig, len(resp.GetConfigs()))
	for i, pConfig := range resp.GetConfigs() {
		config, err := FromProtoTaskPushConfig(pConfig)
		if err != nil {
			return nil, fmt.Errorf("failed to convert config: %w", err)
		}
		configs[i] = config
	}
	return &a2a.ListTaskPushConfigResponse{
		Configs:       configs,
		NextPageToken: resp.GetNextPageToken(),
	}, nil
}

func fromProtoAdditionalInterfaces(pCard *a2apb.AgentCard) []*a2a.AgentInterface {
	pInterfaces := pCard.GetAdditionalInterfaces()
	interfaces := make([]*a2a.AgentInterface, len(pInterfaces)+1)
	interfaces[0] = &a2a.AgentInterface{
		ProtocolBinding: a2a.TransportProtocol(pCard.GetPreferredTransport()),
		URL:             pCard.GetUrl(),
		ProtocolVersion: a2a.ProtocolVersion(pCard.GetProtocolVersion()),
	}
	for i, pIface := range pInterfaces {
		interfaces[i+1] = &a2a.AgentInterface{
			ProtocolBinding: a2a.TransportProtocol(pIface.GetTransport()),
			URL:             pIface.GetUrl(),
			ProtocolVersion: a2a.ProtocolVersion(a2av0.Version),
		}
	}
	return interfaces
}

func fromProtoAgentProvider(pProvider *a2apb.AgentProvider) *a2a.AgentProvider {
	if pProvider == nil {
		return nil
	}
	return &a2a.AgentProvider{Org: pProvider.GetOrganization(), URL: pProvider.GetUrl()}
}

func fromProtoAgentExtensions(pExtensions []*a2apb.AgentExtension) ([]a2a.AgentExtension, error) {
	extensions := make([]a2a.AgentExtension, len(pExtensions))
	for i, pExt := range pExtensions {
		extensions[i] = a2a.AgentExtension{
			URI:         pExt.GetUri(),
			Description: pExt.GetDescription(),
			Required:    pExt.GetRequired(),
			Params:      pExt.GetParams().AsMap(),
		}
	}
	return extensions, nil
}

func fromProtoCapabilities(pCard *a2apb.AgentCard) (a2a.AgentCapabilities, error) {
	pCapabilities := pCard.GetCapabilities()
	extensions, err := fromProtoAgentExtensions(pCapabilities.GetExtensions())
	if err != nil {
		return a2a.AgentCapabilities{}, fmt.Errorf("failed to convert extensions: %w", err)
	}

	result := a2a.AgentCapabilities{
		PushNotifications: pCapabilities.GetPushNotifications(),
		Streaming:         pCapabilities.GetStreaming(),
		Extensions:        extensions,
		ExtendedAgentCard: pCard.GetSupportsAuthenticatedExtendedCard(),
	}
	return result, nil
}

func fromProtoOAuthFlows(pFlows *a2apb.OAuthFlows) (a2a.OAuthFlows, error) {
	if pFlows == nil {
		return nil, fmt.Errorf("oauth flows is nil")
	}
	switch f := pFlows.Flow.(type) {
	case *a2apb.OAuthFlows_AuthorizationCode:
		return &a2a.AuthorizationCodeOAuthFlow{
			AuthorizationURL: f.AuthorizationCode.GetAuthorizationUrl(),
			TokenURL:         f.AuthorizationCode.GetTokenUrl(),
			RefreshURL:       f.AuthorizationCode.GetRefreshUrl(),
			Scopes:           f.AuthorizationCode.GetScopes(),
		}, nil
	case *a2apb.OAuthFlows_ClientCredentials:
		return &a2a.ClientCredentialsOAuthFlow{
			TokenURL:   f.ClientCredentials.GetTokenUrl(),
			RefreshURL: f.ClientCredentials.GetRefreshUrl(),
			Scopes:     f.ClientCredentials.GetScopes(),
		}, nil
	case *a2apb.OAuthFlows_Implicit:
		return &a2a.ImplicitOAuthFlow{
			AuthorizationURL: f.Implicit.GetAuthorizationUrl(),
			RefreshURL:       f.Implicit.GetRefreshUrl(),
			Scopes:           f.Implicit.GetScopes(),
		}, nil
	case *a2apb.OAuthFlows_Password:
		return &a2a.PasswordOAuthFlow{
			TokenURL:   f.Password.GetTokenUrl(),
			RefreshURL: f.Password.GetRefreshUrl(),
			Scopes:     f.Password.GetScopes(),
		}, nil
	default:
		return nil, fmt.Errorf("unsupported oauth flow type: %T", f)
	}
}

func fromProtoSecurityScheme(pScheme *a2apb.SecurityScheme) (a2a.SecurityScheme, error) {
	if pScheme == nil {
		return nil, fmt.Errorf("security scheme is nil")
	}

	switch s := pScheme.Scheme.(type) {
	case *a2apb.SecurityScheme_ApiKeySecurityScheme:
		return a2a.APIKeySecurityScheme{
			Name:        s.ApiKeySecurityScheme.GetName(),
			Location:    a2a.APIKeySecuritySchemeLocation(s.ApiKeySecurityScheme.GetLocation()),
			Description: s.ApiKeySecurityScheme.GetDescription(),
		}, nil
	case *a2apb.SecurityScheme_HttpAuthSecurityScheme:
		return a2a.HTTPAuthSecurityScheme{
			Scheme:       s.HttpAuthSecurityScheme.GetScheme(),
			Description:  s.HttpAuthSecurityScheme.GetDescription(),
			BearerFormat: s.HttpAuthSecurityScheme.GetBearerFormat(),
		}, nil
	case *a2apb.SecurityScheme_OpenIdConnectSecurityScheme:
		return a2a.OpenIDConnectSecurityScheme{
			OpenIDConnectURL: s.OpenIdConnectSecurityScheme.GetOpenIdConnectUrl(),
			Description:      s.OpenIdConnectSecurityScheme.GetDescription(),
		}, nil
	case *a2apb.SecurityScheme_Oauth2SecurityScheme:
		flows, err := fromProtoOAuthFlows(s.Oauth2SecurityScheme.GetFlows())
		if err != nil {
			return nil, fmt.Errorf("failed to convert OAuthFlows: %w", err)
		}
		return a2a.OAuth2SecurityScheme{
			Flows:             flows,
			Oauth2MetadataURL: s.Oauth2SecurityScheme.Oauth2MetadataUrl,
			Description:       s.Oauth2SecurityScheme.GetDescription(),
		}, nil
	case *a2apb.SecurityScheme_MtlsSecurityScheme:
		return a2a.MutualTLSSecurityScheme{
			Description: s.MtlsSecurityScheme.GetDescription(),
		}, nil
	default:
		return nil, fmt.Errorf("unsupported security scheme type: %T", s)
	}
}

func fromProtoSecuritySchemes(pSchemes map[string]*a2apb.SecurityScheme) (a2a.NamedSecuritySchemes, error) {
	schemes := make(a2a.NamedSecuritySchemes, len(pSchemes))
	for name, pScheme := range pSchemes {
		scheme, err := fromProtoSecurityScheme(pScheme)
		if err != nil {
			return nil, fmt.Errorf("failed to convert security scheme: %w", err)
		}
		schemes[a2a.SecuritySchemeName(name)] = scheme
	}
	return schemes, nil
}

func fromProtoSecurity(pSecurity []*a2apb.Security) a2a.SecurityRequirementsOptions {
	security := make(a2a.SecurityRequirementsOptions, len(pSecurity))
	for i, pSec := range pSecurity {
		schemes := make(map[a2a.SecuritySchemeName]a2a.SecuritySchemeScopes)
		for name, scopes := range pSec.Schemes {
			schemes[a2a.SecuritySchemeName(name)] = scopes.GetList()
		}
		security[i] = schemes
	}
	return security
}

func fromProtoSkills(pSkills []*a2apb.AgentSkill) []a2a.AgentSkill {
	skills := make([]a2a.AgentSkill, len(pSkills))
	for i, pSkill := range pSkills {
		skills[i] = a2a.AgentSkill{
			ID:                   pSkill.GetId(),
			Name:                 pSkill.GetName(),
			Description:          pSkill.GetDescription(),
			Tags:                 pSkill.GetTags(),
			Examples:             pSkill.GetExamples(),
			InputModes:           pSkill.GetInputModes(),
			OutputModes:          pSkill.GetOutputModes(),
			SecurityRequirements: fromProtoSecurity(pSkill.GetSecurity()),
		}
	}
	return skills
}

func fromProtoAgentCardSignatures(in []*a2apb.AgentCardSignature) []a2a.AgentCardSignature {
	if in == nil {
		return nil
	}
	out := make([]a2a.AgentCardSignature, len(in))
	for i, v := range in {
		out[i] = a2a.AgentCardSignature{
			Protected: v.GetProtected(),
			Signature: v.GetSignature(),
			Header:    fromProtoMap(v.GetHeader()),
		}
	}
	return out
}

// FromProtoAgentCard converts a [a2apb.AgentCard] to a [a2a.AgentCard].
func FromProtoAgentCard(pCard *a2apb.AgentCard) (*a2a.AgentCard, error) {
	if pCard == nil {
		return nil, nil
	}

	capabilities, err := fromProtoCapabilities(pCard)
	if err != nil {
		return nil, fmt.Errorf("failed to convert agent capabilities: %w", err)
	}

	schemes, err := fromProtoSecuritySchemes(pCard.GetSecuritySchemes())
	if err != nil {
		return nil, fmt.Errorf("failed to convert security schemes: %w", err)
	}

	result := &a2a.AgentCard{
		Name:                 pCard.GetName(),
		Description:          pCard.GetDescription(),
		Version:              pCard.GetVersion(),
		DocumentationURL:     pCard.GetDocumentationUrl(),
		Capabilities:         capabilities,
		DefaultInputModes:    pCard.GetDefaultInputModes(),
		DefaultOutputModes:   pCard.GetDefaultOutputModes(),
		SecuritySchemes:      schemes,
		Provider:             fromProtoAgentProvider(pCard.GetProvider()),
		SupportedInterfaces:  fromProtoAdditionalInterfaces(pCard),
		SecurityRequirements: fromProtoSecurity(pCard.GetSecurity()),
		Skills:               fromProtoSkills(pCard.GetSkills()),
		IconURL:              pCard.GetIconUrl(),
		Signatures:           fromProtoAgentCardSignatures(pCard.GetSignatures()),
	}

	return result, nil
}
