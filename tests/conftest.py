"""The suite uses dynamo_app.testing's fixtures exactly as a user's project would."""

import os

# Never let boto3's credential chain probe an instance-metadata address.
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
