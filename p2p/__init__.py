"""p2p: serverless peer-to-peer board games over a public MQTT broker."""

__version__ = "0.1.0"
