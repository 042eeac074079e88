package domain

// hubZones are the IANA time zones of the cargo hubs that flights may
// serve until the full reference data is loaded. Flight times are local
// to each airport, so a flight needs the zones of both ends.
var hubZones = map[string]string{
	"AMS": "Europe/Amsterdam", "ANC": "America/Anchorage", "ATL": "America/New_York", "BKK": "Asia/Bangkok",
	"BOM": "Asia/Kolkata", "BRU": "Europe/Brussels", "CAN": "Asia/Shanghai", "CDG": "Europe/Paris",
	"CGN": "Europe/Berlin", "CVG": "America/New_York", "DEL": "Asia/Kolkata", "DFW": "America/Chicago",
	"DOH": "Asia/Qatar", "DWC": "Asia/Dubai", "DXB": "Asia/Dubai", "EWR": "America/New_York",
	"FRA": "Europe/Berlin", "GRU": "America/Sao_Paulo", "HKG": "Asia/Hong_Kong", "IAH": "America/Chicago",
	"ICN": "Asia/Seoul", "IST": "Europe/Istanbul", "JFK": "America/New_York", "JNB": "Africa/Johannesburg",
	"KUL": "Asia/Kuala_Lumpur", "LAX": "America/Los_Angeles", "LEJ": "Europe/Berlin", "LGG": "Europe/Brussels",
	"LHR": "Europe/London", "LUX": "Europe/Luxembourg", "MAD": "Europe/Madrid", "MEM": "America/Chicago",
	"MEX": "America/Mexico_City", "MIA": "America/New_York", "MUC": "Europe/Berlin", "MXP": "Europe/Rome",
	"NBO": "Africa/Nairobi", "NRT": "Asia/Tokyo", "ORD": "America/Chicago", "PEK": "Asia/Shanghai",
	"PVG": "Asia/Shanghai", "SCL": "America/Santiago", "SDF": "America/New_York", "SFO": "America/Los_Angeles",
	"SIN": "Asia/Singapore", "SYD": "Australia/Sydney", "TPE": "Asia/Taipei", "YYZ": "America/Toronto",
	"ZRH": "Europe/Zurich", "BOG": "America/Bogota", "LIM": "America/Lima", "VCP": "America/Sao_Paulo",
	"CPH": "Europe/Copenhagen", "VIE": "Europe/Vienna", "HAN": "Asia/Ho_Chi_Minh", "SGN": "Asia/Ho_Chi_Minh",
	"MNL": "Asia/Manila", "CMB": "Asia/Colombo", "DAC": "Asia/Dhaka", "KHI": "Asia/Karachi",
}

// AirportZone returns the IANA zone of a known airport.
func AirportZone(code string) (string, bool) {
	z, ok := hubZones[code]
	return z, ok
}
