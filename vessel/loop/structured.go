package loop

// StatusSchemaMismatch: the agent asks for a structured answer
// (vessel.toml [model.response_format], json_object or json_schema) and
// the final answer is not JSON of that shape; Result.Error says why.
const StatusSchemaMismatch = "schema_mismatch"
