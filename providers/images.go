package providers

import "strings"

// imageRefusals are the words providers use when the model takes no
// images (nanobot's _IMAGE_UNSUPPORTED_MARKERS, plus the ones OpenRouter
// and DeepSeek send).
var imageRefusals = []string{
	"image_url is only supported",
	"image_url is not supported",
	"does not support image",
	"images are not supported",
	"image input is not supported",
	"unsupported image input",
	"no endpoints found that support image input",
	`unknown variant "image_url"`,
	"not a vision model",
}

// RefusesImages reports a refusal of the request because it carried
// images: then the call is made again with the images as text.
func RefusesImages(err error) bool {
	pe := Classify(err)
	if pe == nil || pe.Status >= 500 || pe.Kind != "" {
		return false
	}
	msg := strings.ToLower(pe.Message + " " + err.Error())
	for _, m := range imageRefusals {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}
