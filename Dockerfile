# syntax=docker/dockerfile:1
# The verdict binary in a distroless image: static (CGO_ENABLED=0), running
# as the nonroot user (65532). make image builds it with VERSION from git.
ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=devel
ARG TARGETOS=linux
ARG TARGETARCH=amd64
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/verdict ./cmd/verdict

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/verdict /verdict
USER 65532:65532
ENTRYPOINT ["/verdict"]
