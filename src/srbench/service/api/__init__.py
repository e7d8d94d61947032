"""The service's HTTP edge: the aiohttp application, authentication, strict JSON bodies, the request and
response models of the API contract and the OpenAPI document generated from them."""
