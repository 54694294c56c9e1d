module github.com/kindkit/kindkit

go 1.26

require (
	github.com/atombender/go-jsonschema v0.24.1
	github.com/coder/websocket v1.8.15
	github.com/dave/jennifer v1.7.1
	github.com/google/go-cmp v0.7.0
	github.com/nyaruka/phonenumbers v1.8.1
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	go.uber.org/goleak v1.3.0
	golang.org/x/text v0.23.0
)

require (
	dario.cat/mergo v1.0.2 // indirect
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/mitchellh/go-wordwrap v1.0.1 // indirect
	github.com/sanity-io/litter v1.5.8 // indirect
	github.com/sosodev/duration v1.4.0 // indirect
	google.golang.org/protobuf v1.36.11 // indirect
)
