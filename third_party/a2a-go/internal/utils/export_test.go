package utils

// HandCopyForTest and GobCopyForTest expose the two ways DeepCopy copies.
var HandCopyForTest = handCopy

func GobCopyForTest[T any](v *T) (*T, error) { return gobCopy(v) }
