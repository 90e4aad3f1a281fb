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

package taskstore

import "github.com/a2aproject/a2a-go/v2/internal/utils"

// AstralVessel patch (see third_party/a2a-go/PATCHES.md): the task manager
// copies a StoredTask with utils.DeepCopy for every event; its task is
// copied by hand, as gob would copy it, when the hand copy knows all it
// holds. Version and User are plain values.
func init() {
	utils.RegisterHandCopy(func(s *StoredTask) (*StoredTask, bool) {
		c := *s
		if s.Task != nil {
			t, ok := utils.CopyTask(s.Task)
			if !ok {
				return nil, false
			}
			c.Task = t
		}
		return &c, true
	})
}
