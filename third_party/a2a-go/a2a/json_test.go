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

package a2a

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustMarshal(t *testing.T, data any) string {
	t.Helper()
	bytes, err := json.Marshal(data)
	if err != nil {
		t.Fatalf("Marshal() failed with: %v", err)
	}
	return string(bytes)
}

func mustUnmarshal(t *testing.T, data []byte, out any) {
	t.Helper()
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("Unmarshal() failed with: %v", err)
	}
}

func TestContentPartsJSONCodec(t *testing.T) {
	parts := ContentParts{
		NewTextPart("hello, world"),
		NewDataPart(map[string]any{"foo": "bar"}),
		{Content: URL("https://cats.com/1.png"), Filename: "foo"},
		{Content: Raw([]byte{0xFF, 0xFE}), Filename: "foo", MediaType: "image/png"},
		{Content: Text("42"), Metadata: map[string]any{"foo": "bar"}},
	}

	jsons := []string{
		`{"text":"hello, world"}`,
		`{"data":{"foo":"bar"}}`,
		`{"url":"https://cats.com/1.png","filename":"foo"}`,
		`{"raw":"//4=","filename":"foo","mediaType":"image/png"}`,
		`{"text":"42","metadata":{"foo":"bar"}}`,
	}

	wantJSON := fmt.Sprintf("[%s]", strings.Join(jsons, ","))
	if got := mustMarshal(t, parts); got != wantJSON {
		t.Fatalf("Marshal() failed:\ngot: %s \nwant: %s", got, wantJSON)
	}

	var got ContentParts
	mustUnmarshal(t, []byte(wantJSON), &got)
	if !reflect.DeepEqual(got, parts) {
		t.Fatalf("Unmarshal() failed:\ngot: %#v \nwant: %#v", got, parts)
	}
}

func TestContentPartsJSONCodecUnknownType(t *testing.T) {
	wrongJSON := `[{"unknown":"hello, world"}]`
	var gotWrong ContentParts
	err := json.Unmarshal([]byte(wrongJSON), &gotWrong)
	if err == nil {
		t.Fatalf("Unmarshal() should have failed with unknown part content type")
	}
	if err.Error() != "unknown part content type: [unknown]" {
		t.Fatalf("got: %v, want: %v", err, "unknown part content type: [unknown]")
	}
}

func TestSecuritySchemeJSONCodec(t *testing.T) {
	schemes := NamedSecuritySchemes{
		"name1": APIKeySecurityScheme{Name: "abc", Location: APIKeySecuritySchemeLocationCookie},
		"name2": OpenIDConnectSecurityScheme{OpenIDConnectURL: "url"},
		"name3": MutualTLSSecurityScheme{Description: "optional"},
		"name4": HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT"},
		"name5": OAuth2SecurityScheme{
			Oauth2MetadataURL: "https://test.com",
			Description:       "test",
			Flows: PasswordOAuthFlow{
				TokenURL: "url",
				Scopes:   map[string]string{"email": "read user emails"},
			},
		},
	}

	entriesJSON := []string{
		`"name1":{"apiKeySecurityScheme":{"location":"cookie","name":"abc"}}`,
		`"name2":{"openIdConnectSecurityScheme":{"openIdConnectUrl":"url"}}`,
		`"name3":{"mtlsSecurityScheme":{"description":"optional"}}`,
		`"name4":{"httpAuthSecurityScheme":{"bearerFormat":"JWT","scheme":"Bearer"}}`,
		`"name5":{"oauth2SecurityScheme":{"oauth2MetadataUrl": "https://test.com", "description": "test","flows":{"password":{"scopes":{"email":"read user emails"},"tokenUrl":"url"}}}}`,
	}
	wantJSON := fmt.Sprintf("{%s}", strings.Join(entriesJSON, ","))

	var decodedJSON NamedSecuritySchemes
	mustUnmarshal(t, []byte(wantJSON), &decodedJSON)
	if !reflect.DeepEqual(decodedJSON, schemes) {
		t.Fatalf("Unmarshal() failed:\ngot: %s \nwant: %s", decodedJSON, schemes)
	}

	encodedSchemes := mustMarshal(t, &schemes)
	var decodedBack NamedSecuritySchemes
	mustUnmarshal(t, []byte(encodedSchemes), &decodedBack)
	if !reflect.DeepEqual(decodedJSON, decodedBack) {
		t.Fatalf("Decoding back failed:\ngot: %s \nwant: %s", decodedBack, decodedJSON)
	}
}

func TestSecuritySchemeJSONUnmarshalUnknownType(t *testing.T) {
	tests := []struct {
		name      string
		json      string
		wantError string
	}{
		{
			name:      "unknown security scheme type",
			json:      `{"name1":{"unknown":"abc"}}`,
			wantError: "unknown security scheme type for name1: [unknown]",
		},
		{
			name:      "unknown oauth flow type",
			json:      `{"name2":{"oauth2SecurityScheme":{"oauth2MetadataUrl": "https://test.com", "description": "test","flows":{"unknown":{"scopes":{"email":"read user emails"},"tokenUrl":"url"}}}}}`,
			wantError: "unknown OAuth flow type: [unknown]",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var gotWrong NamedSecuritySchemes
			err := json.Unmarshal([]byte(tc.json), &gotWrong)
			if err == nil {
				t.Fatalf("Unmarshal() should have failed with %s", tc.name)
			}
			if err.Error() != tc.wantError {
				t.Fatalf("got: %v, want: %v", err, tc.wantError)
			}
		})
	}
}

func TestAgentCardParsing(t *testing.T) {
	cardJSON := `
{
  "name": "GeoSpatial Route Planner Agent",
  "description": "Provides advanced route planning, traffic analysis, and custom map generation services. This agent can calculate optimal routes, estimate travel times considering real-time traffic, and create personalized maps with points of interest.",
  "supportedInterfaces" : [
    {"url": "https://georoute-agent.example.com/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
    {"url": "https://georoute-agent.example.com/a2a/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
    {"url": "https://georoute-agent.example.com/a2a/json", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
  ],
  "provider": {
    "organization": "Example Geo Services Inc.",
    "url": "https://www.examplegeoservices.com"
  },
  "iconUrl": "https://georoute-agent.example.com/icon.png",
  "version": "1.2.0",
  "documentationUrl": "https://docs.examplegeoservices.com/georoute-agent/api",
  "capabilities": {
    "streaming": true,
    "pushNotifications": true,
    "extendedAgentCard": true
  },
  "securitySchemes": {
    "google": {
      "openIdConnectSecurityScheme": {
        "openIdConnectUrl": "https://accounts.google.com/.well-known/openid-configuration"
      }
    }
  },
  "securityRequirements": [{ "schemes": { "google": ["openid", "profile", "email"] } }],
  "defaultInputModes": ["application/json", "text/plain"],
  "defaultOutputModes": ["application/json", "image/png"],
  "skills": [
    {
      "id": "route-optimizer-traffic",
      "name": "Traffic-Aware Route Optimizer",
      "description": "Calculates the optimal driving route between two or more locations, taking into account real-time traffic conditions, road closures, and user preferences (e.g., avoid tolls, prefer highways).",
      "tags": ["maps", "routing", "navigation", "directions", "traffic"],
      "examples": [
        "Plan a route from '1600 Amphitheatre Parkway, Mountain View, CA' to 'San Francisco International Airport' avoiding tolls.",
        "{\"origin\": {\"lat\": 37.422, \"lng\": -122.084}, \"destination\": {\"lat\": 37.7749, \"lng\": -122.4194}, \"preferences\": [\"avoid_ferries\"]}"
      ],
      "inputModes": ["application/json", "text/plain"],
      "outputModes": [
        "application/json",
        "application/vnd.geo+json",
        "text/html"
      ],
      "securityRequirements": [{ "schemes": { "google": ["https://www.googleapis.com/auth/maps"] } }]
    },
    {
      "id": "custom-map-generator",
      "name": "Personalized Map Generator",
      "description": "Creates custom map images or interactive map views based on user-defined points of interest, routes, and style preferences. Can overlay data layers.",
      "tags": ["maps", "customization", "visualization", "cartography"],
      "examples": [
        "Generate a map of my upcoming road trip with all planned stops highlighted.",
        "Show me a map visualizing all coffee shops within a 1-mile radius of my current location."
      ],
      "inputModes": ["application/json"],
      "outputModes": [
        "image/png",
        "image/jpeg",
        "application/json",
        "text/html"
      ]
    }
  ],
  "signatures": [
    {
      "protected": "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpPU0UiLCJraWQiOiJrZXktMSIsImprdSI6Imh0dHBzOi8vZXhhbXBsZS5jb20vYWdlbnQvandrcy5qc29uIn0",
      "signature": "QFdkNLNszlGj3z3u0YQGt_T9LixY3qtdQpZmsTdDHDe3fXV9y9-B3m2-XgCpzuhiLt8E0tV6HXoZKHv4GtHgKQ"
    }
  ]
}
`
	want := AgentCard{
		Name:        "GeoSpatial Route Planner Agent",
		Description: "Provides advanced route planning, traffic analysis, and custom map generation services. This agent can calculate optimal routes, estimate travel times considering real-time traffic, and create personalized maps with points of interest.",
		SupportedInterfaces: []*AgentInterface{
			{URL: "https://georoute-agent.example.com/a2a/v1", ProtocolBinding: TransportProtocolJSONRPC, ProtocolVersion: Version},
			{URL: "https://georoute-agent.example.com/a2a/grpc", ProtocolBinding: TransportProtocolGRPC, ProtocolVersion: Version},
			{URL: "https://georoute-agent.example.com/a2a/json", ProtocolBinding: TransportProtocolHTTPJSON, ProtocolVersion: Version},
		},
		Provider: &AgentProvider{
			Org: "Example Geo Services Inc.",
			URL: "https://www.examplegeoservices.com",
		},
		IconURL:          "https://georoute-agent.example.com/icon.png",
		Version:          "1.2.0",
		DocumentationURL: "https://docs.examplegeoservices.com/georoute-agent/api",
		Capabilities: AgentCapabilities{
			Streaming:         true,
			PushNotifications: true,
			ExtendedAgentCard: true,
		},
		SecuritySchemes: NamedSecuritySchemes{
			SecuritySchemeName("google"): OpenIDConnectSecurityScheme{
				OpenIDConnectURL: "https://accounts.google.com/.well-known/openid-configuration",
			},
		},
		SecurityRequirements: SecurityRequirementsOptions{
			{
				SecuritySchemeName("google"): []string{"openid", "profile", "email"},
			},
		},
		DefaultInputModes:  []string{"application/json", "text/plain"},
		DefaultOutputModes: []string{"application/json", "image/png"},
		Skills: []AgentSkill{
			{
				ID:          "route-optimizer-traffic",
				Name:        "Traffic-Aware Route Optimizer",
				Description: "Calculates the optimal driving route between two or more locations, taking into account real-time traffic conditions, road closures, and user preferences (e.g., avoid tolls, prefer highways).",
				Tags:        []string{"maps", "routing", "navigation", "directions", "traffic"},
				Examples: []string{
					"Plan a route from '1600 Amphitheatre Parkway, Mountain View, CA' to 'San Francisco International Airport' avoiding tolls.",
					`{"origin": {"lat": 37.422, "lng": -122.084}, "destination": {"lat": 37.7749, "lng": -122.4194}, "preferences": ["avoid_ferries"]}`,
				},
				InputModes:  []string{"application/json", "text/plain"},
				OutputModes: []string{"application/json", "application/vnd.geo+json", "text/html"},
				SecurityRequirements: SecurityRequirementsOptions{
					{
						SecuritySchemeName("google"): []string{"https://www.googleapis.com/auth/maps"},
					},
				},
			},
			{
				ID:          "custom-map-generator",
				Name:        "Personalized Map Generator",
				Description: "Creates custom map images or interactive map views based on user-defined points of interest, routes, and style preferences. Can overlay data layers.",
				Tags:        []string{"maps", "customization", "visualization", "cartography"},
				Examples: []string{
					"Generate a map of my upcoming road trip with all planned stops highlighted.",
					"Show me a map visualizing all coffee shops within a 1-mile radius of my current location.",
				},
				InputModes:  []string{"application/json"},
				OutputModes: []string{"image/png", "image/jpeg", "application/json", "text/html"},
			},
		},
		Signatures: []AgentCardSignature{
			{
				Protected: "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpPU0UiLCJraWQiOiJrZXktMSIsImprdSI6Imh0dHBzOi8vZXhhbXBsZS5jb20vYWdlbnQvandrcy5qc29uIn0",
				Signature: "QFdkNLNszlGj3z3u0YQGt_T9LixY3qtdQpZmsTdDHDe3fXV9y9-B3m2-XgCpzuhiLt8E0tV6HXoZKHv4GtHgKQ",
			},
		},
	}

	var got AgentCard
	if err := json.Unmarshal([]byte(cardJSON), &got); err != nil {
		t.Fatalf("AgentCard parsing failed: %v", err)
	}

	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AgentCard codec diff(-want +got):\n%v", diff)
	}
}

func TestTaskState_Codec(t *testing.T) {
	stateToLabel := map[TaskState]string{
		TaskStateUnspecified:   "TASK_STATE_UNSPECIFIED",
		TaskStateAuthRequired:  "TASK_STATE_AUTH_REQUIRED",
		TaskStateCanceled:      "TASK_STATE_CANCELED",
		TaskStateCompleted:     "TASK_STATE_COMPLETED",
		TaskStateFailed:        "TASK_STATE_FAILED",
		TaskStateInputRequired: "TASK_STATE_INPUT_REQUIRED",
		TaskStateRejected:      "TASK_STATE_REJECTED",
		TaskStateSubmitted:     "TASK_STATE_SUBMITTED",
		TaskStateWorking:       "TASK_STATE_WORKING",
	}

	for state, label := range stateToLabel {
		bytes, err := json.Marshal(state)
		if err != nil {
			t.Fatalf("failed to marshal: %v", err)
		}
		expectedJSON := `"` + label + `"`
		if string(bytes) != expectedJSON {
			t.Errorf("got %s, want %s", bytes, expectedJSON)
		}

		var got TaskState
		if err := json.Unmarshal([]byte(expectedJSON), &got); err != nil {
			t.Fatalf("failed to unmarshal: %v", err)
		}
		if got != state {
			t.Errorf("got %s, want %s", got, state)
		}
	}
}

func TestMessageRole_Codec(t *testing.T) {
	roleToLabel := map[MessageRole]string{
		MessageRoleUnspecified: "ROLE_UNSPECIFIED",
		MessageRoleAgent:       "ROLE_AGENT",
		MessageRoleUser:        "ROLE_USER",
	}

	for role, label := range roleToLabel {
		bytes, err := json.Marshal(role)
		if err != nil {
			t.Fatalf("failed to marshal: %v", err)
		}
		expectedJSON := `"` + label + `"`
		if string(bytes) != expectedJSON {
			t.Errorf("got %s, want %s", bytes, expectedJSON)
		}

		var got MessageRole
		if err := json.Unmarshal([]byte(expectedJSON), &got); err != nil {
			t.Fatalf("failed to unmarshal: %v", err)
		}
		if got != role {
			t.Errorf("got %s, want %s", got, role)
		}
	}
}
