// Package docs embeds the OpenAPI document of /v1 (openapi.yaml), served as /v1/openapi.json
// and the base of the generated /api/v1 document.
package docs

import _ "embed"

// OpenAPIV1 is docs/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPIV1 []byte
