// Package loop stands in for vessel/loop.
package loop

// Name is used by the planted egress.
const Name = "loop"
