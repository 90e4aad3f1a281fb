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

/*
Package agentcard provides utilities for fetching public [a2a.AgentCard].
A [Resolver] can be created with a custom [http.Client] or a package-level DefaultResolver can be used.

	card, err := agentcard.DefaultResolver.Resolve(ctx, baseURL)

	// or

	resolver := agentcard.NewResolver(customClient)
	card, err := resolver.Resolve(ctx, baseURL)

By default the request is sent for a well-known card location, but this can be customized by providing [ResolveOption]s.

	card, err := resolver.Resolve(
		ctx,
		baseURL,
		a2aclient.WithPath(customPath),
		a2aclient.WithHeader(key, value),
	)
*/
package agentcard
