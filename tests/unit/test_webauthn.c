/* WebAuthn verification against the W3C WebAuthn Level 3 test vectors
 * (https://w3c.github.io/webauthn/#sctn-test-vectors, section "Test
 * Vectors"), then every single-field mutation of each vector, each of which
 * must be refused by the check that names it.
 *
 * The hex below is the published clientDataJSON, attestationObject,
 * authenticatorData and signature of each vector, byte for byte. The spec
 * derives every random value with HKDF-SHA-256 from the input key material
 * 'WebAuthn test vectors'; the tests recompute the challenges, credential
 * ids, AAGUIDs and private keys the same way rather than copying them, so
 * a transcription error in either shows up as a failure.
 *
 * Where a check sits behind a signature (packed attestation, assertions),
 * the mutation is also re-signed with the vector's own private key, so the
 * flag, rpIdHash or certificate check is shown to refuse on its own. */
#include <errno.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include "steward/auth/webauthn.h"
#include "test_help.h"

/* ---- the published vectors (section "Test Vectors") ----
 * none_  "ES256 Credential with No Attestation"        (none.ES256)
 * self_  "ES256 Credential with Self Attestation"      (packed-self.ES256)
 * xo_    "ES256 Credential with "crossOrigin": true in clientDataJSON"
 * top_   "ES256 Credential with "topOrigin" in clientDataJSON"
 * long_  "ES256 Credential with very long credential ID"
 * x5c_   "Packed Attestation with ES256 Credential"    (packed.ES256)
 * rsa_   "Packed Attestation with RS256 Credential"    (packed.RS256)
 * ed_    "Packed Attestation with Ed25519 Credential"  (packed.EdDSA)
 * _reg_cdj/_reg_att: registration clientDataJSON and attestationObject;
 * _auth_ad/_auth_cdj/_auth_sig: the authentication's authenticatorData,
 * clientDataJSON and signature. */

static const char none_reg_cdj[] =
	"7b2274797065223a22776562617574686e2e637265617465222c226368616c6c656e6765223a22414d4d5074"
	"34557878475453746e63647134313759447742466938767049612d7077386f4f755657345441222c226f7269"
	"67696e223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c"
	"73652c22657874726144617461223a22636c69656e74446174614a534f4e206d617920626520657874656e64"
	"65642077697468206164646974696f6e616c206669656c647320696e20746865206675747572652c20737563"
	"6820617320746869733a20426b5165446a646354427258426941774a544c453551227d";
static const char none_reg_att[] =
	"a363666d74646e6f6e656761747453746d74a068617574684461746158a4bfabc37432958b063360d3ad6461"
	"c9c4735ae7f8edd46592a5e0f01452b2e4b559000000008446ccb9ab1db374750b2367ff6f3a1f0020f91f39"
	"1db4c9b2fde0ea70189cba3fb63f579ba6122b33ad94ff3ec330084be4a5010203262001215820afefa16f97"
	"ca9b2d23eb86ccb64098d20db90856062eb249c33a9b672f26df61225820930a56b87a2fca66334b03458abf"
	"879717c12cc68ed73290af2e2664796b9220";
static const char none_auth_ad[] =
	"bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b51900000000";
static const char none_auth_cdj[] =
	"7b2274797065223a22776562617574686e2e676574222c226368616c6c656e6765223a224f63446e55685158"
	"756c5455506f334a5558543049393770767a7a59425039745a63685879617630314167222c226f726967696e"
	"223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c73657d";
static const char none_auth_sig[] =
	"3046022100f50a4e2e4409249c4a853ba361282f09841df4dd4547a13a87780218deffcd380221008480ac0f"
	"0b93538174f575bf11a1dd5d78c6e486013f937295ea13653e331e87";
static const char self_reg_cdj[] =
	"7b2274797065223a22776562617574686e2e637265617465222c226368616c6c656e6765223a2265476e4374"
	"334c55745936366b336a506a796e6962506b31716e666644616966715a774c33417032392d55222c226f7269"
	"67696e223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c"
	"73652c22657874726144617461223a22636c69656e74446174614a534f4e206d617920626520657874656e64"
	"65642077697468206164646974696f6e616c206669656c647320696e20746865206675747572652c20737563"
	"6820617320746869733a205539685458764b453255526b4d6e625f307859485667227d";
static const char self_reg_att[] =
	"a363666d74667061636b65646761747453746d74a263616c672663736967584630440220067a20754ab92500"
	"5dbf378097c92120031581c73228d1fb4f5b881bcd7da98302207fc7b147558c7c0eba3af18bd9d121fa3d3a"
	"26d17fe3f220272178f473b6006d68617574684461746158a4bfabc37432958b063360d3ad6461c9c4735ae7"
	"f8edd46592a5e0f01452b2e4b55d00000000df850e09db6afbdfab51697791506cfc0020455ef34e2043a87d"
	"b3d4afeb39bbcb6cc32df9347c789a865ecdca129cbef58ca5010203262001215820eb151c8176b225cc6515"
	"59fecf07af450fd85802046656b34c18f6cf193843c5225820927b8aa427a2be1b8834d233a2d34f61f13bfd"
	"44119c325d5896e183fee484f2";
static const char self_auth_ad[] =
	"bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b50900000000";
static const char self_auth_cdj[] =
	"7b2274797065223a22776562617574686e2e676574222c226368616c6c656e6765223a225248696843784e53"
	"4e493352594d45314f7731476d3132786e726b634a5f6666707637546e2d4a71386773222c226f726967696e"
	"223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c73652c"
	"22657874726144617461223a22636c69656e74446174614a534f4e206d617920626520657874656e64656420"
	"77697468206164646974696f6e616c206669656c647320696e20746865206675747572652c20737563682061"
	"7320746869733a206754623533727a36456853576f6d58477a696d433151227d";
static const char self_auth_sig[] =
	"304402203310b9431903c401f1be2bdc8d23a4007682dbbddcf846994947b7f465daf84002204e94dd00047b"
	"316061b3b99772b7efd95994a83ef584b3b6b825ea3550251b66";
static const char xo_reg_cdj[] =
	"7b2274797065223a22776562617574686e2e637265617465222c226368616c6c656e6765223a224f2d57717a"
	"514e5463554a484930437257576e7951504859647862694332674872434d475666704c4f306b222c226f7269"
	"67696e223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a747275"
	"652c22657874726144617461223a22636c69656e74446174614a534f4e206d617920626520657874656e6465"
	"642077697468206164646974696f6e616c206669656c647320696e20746865206675747572652c2073756368"
	"20617320746869733a207a5a7175457444523944577170573574425754467567227d";
static const char xo_reg_att[] =
	"a363666d74646e6f6e656761747453746d74a068617574684461746158a4bfabc37432958b063360d3ad6461"
	"c9c4735ae7f8edd46592a5e0f01452b2e4b54500000000883f4f6014f19c09d87aa38123be48d000206e1050"
	"c0d2ca2f07c755cb2c66a74c64fa43065c18f938354d9915db2bd5ce57a501020326200121582022200a473f"
	"90b11078851550d03b4e44a2279f8c4eca27b3153dedfe03e4e97d225820cbd0be95e746ad6f5a8191be1175"
	"6e4c0420e72f65b466d39bc56b8b123a9c6e";
static const char xo_auth_ad[] =
	"bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b50500000000";
static const char xo_auth_cdj[] =
	"7b2274797065223a22776562617574686e2e676574222c226368616c6c656e6765223a226832716c46377144"
	"5f65356c5f505f62796b7945377135645650674547685f49584a6b655737736e4d5463222c226f726967696e"
	"223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a747275652c22"
	"657874726144617461223a22636c69656e74446174614a534f4e206d617920626520657874656e6465642077"
	"697468206164646974696f6e616c206669656c647320696e20746865206675747572652c2073756368206173"
	"20746869733a2039327063545644304162792d713464746d6a36656667227d";
static const char xo_auth_sig[] =
	"3046022100eb12fcf23b12764c0f122e22371fab92e283879fd798f38ee1841c951b6e40e7022100c76237ff"
	"9db77b3c56f30837cda6a09acfa2e915544e609c0733b1184036d1cf";
static const char top_reg_cdj[] =
	"7b2274797065223a22776562617574686e2e637265617465222c226368616c6c656e6765223a225468394d59"
	"5a68706e6a504254786b68555f53646667364f4e58665672454673587a72636b7151664a2d55222c226f7269"
	"67696e223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a747275"
	"652c22746f704f726967696e223a2268747470733a2f2f6578616d706c652e636f6d227d";
static const char top_reg_att[] =
	"a363666d74646e6f6e656761747453746d74a068617574684461746158a4bfabc37432958b063360d3ad6461"
	"c9c4735ae7f8edd46592a5e0f01452b2e4b5410000000097586fd09799a76401c200455099ef2a0020b8ad59"
	"b996047ab18e2ceb57206c362da57458793481f4a8ebf101c7ca7cc0f1a5010203262001215820a1c47c1d82"
	"da4ebe82cd72207102b380670701993bc35398ae2e5726427fe01d22582086c1080d82987028c7f54ecb1b01"
	"185de243b359294a0ed210cd47480f0adc88";
static const char top_auth_ad[] =
	"bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b50500000000";
static const char top_auth_cdj[] =
	"7b2274797065223a22776562617574686e2e676574222c226368616c6c656e6765223a22315570636a4b5332"
	"4b6f34377379486a7372787a68572d466f51465132796b3572426c584f6573656f4759222c226f726967696e"
	"223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a747275652c22"
	"746f704f726967696e223a2268747470733a2f2f6578616d706c652e636f6d222c2265787472614461746122"
	"3a22636c69656e74446174614a534f4e206d617920626520657874656e646564207769746820616464697469"
	"6f6e616c206669656c647320696e20746865206675747572652c207375636820617320746869733a20556946"
	"6f4a4d56525148444146574669347678557051227d";
static const char top_auth_sig[] =
	"3045022100b5a70c81780d5fcc9a4f2ae9caae99058f8accaf58b91fb59329646c28ac6ffc022012e101c165"
	"db3c8e9957f0c54dd6ca9b56bc3bd2f280bd2faa6c1d02c6e5c171";
static const char long_reg_cdj[] =
	"7b2274797065223a22776562617574686e2e637265617465222c226368616c6c656e6765223a22455250484a"
	"6c7a50586d5553516f4c364858675a7036464d75464f61704d322d7830682d587a5859374777222c226f7269"
	"67696e223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c"
	"73657d";
static const char long_reg_att[] =
	"a363666d74646e6f6e656761747453746d74a0686175746844617461590483bfabc37432958b063360d3ad64"
	"61c9c4735ae7f8edd46592a5e0f01452b2e4b549000000008f3360c2cd1b0ac14ffe0795c5d2638e03ff3a76"
	"1a4e1674ad6c4305869435c0eee9c286172c229bb91b48b4ada140c0863417031305cce5b4a27a88d7fe728a"
	"5f5a627de771b4b40e77f187980c124f9fe832d7136010436a056cce716680587d23187cf1fc2c62ae86fc3e"
	"508ee9617ffc74fbc10488ec16ec5e9096328669a898709b655e549738c666c1ae6281dc3b5f733c251d3eef"
	"b76ee70a3805ca91bcc18e49c8dc7f63ebcb486ba8c3d6ab52b88ff72c6a5bb47c32f3ee8683a3ddc8abf608"
	"70448ec8a21b5bdcb183c7dead870255575a6df96eb1b6a2a1019780cba9e4887b17ff1164bbbcc10eb0d86e"
	"d75984cd3fa3419103024507dfd9ce8f92c56af7914cb0bb50b87ba82a312bb7dcd93028dbdcd6adb2669796"
	"67158335171e3682d37755701edbf9d872846a291d49e57ef09da1ec637f5052ed2aa7407f7e61827468e94b"
	"461844f4c67be5fa9c6055a566f8fdfc29d4bf78a9ff275f552cc68ba543fa3962eea36fd1ea8453764577d0"
	"21d0a181efc1f6100ab2e4110039e21ee16970bda7432b6134492155afc126295b3a2eccd12c66a68e340969"
	"e995e3e8c9c476e395cfc21203414110779474f1c9797406637dbe414f132519d3bf0ce4f01734ef0e1a12c3"
	"ad604ff15d766b1624db6a5a7ccbff7bc35c9908df94aba277e0af48f04ff3d16381c47e5a37ed3988a67a3b"
	"1ecaa926336b33391fff04128f869991c9fabd905b6fe3ceef5f8b630ec1c5d2636d5b1961ad5ca5004170f6"
	"f5e482792aad989b0287fe91e5c479403397152f1fa56aa79b156eb47e6c8ea3eb175c34cfb38ad8e7728746"
	"39b1023d4d01395c94e55831671cc022aa6fa1e02a02c2e4abc776f6960e51f83b71a8c0f207b6a347573977"
	"812c9aa5480b0011aa739bd4b76c18c000cc4757cceccb920f007c40c00e37e5ab21476cd9f6054a8fffb55a"
	"108f5c706e2cea2049d81fd321ff47d2a5761b0800955ab1d4f4889f55a84e2601c684f17a4ade7453ea4959"
	"1d0b59c8d9a765052f62219cf6ef4a5dd9539f0617d6ebbebce7c000455475d18449e25c49ef9a1e3efe18c0"
	"9082ebe2058d7c347defaa92f0664553b805c7d76bbfce5f330aca220ac90a789380fc479ea0d8793205813c"
	"ca590a912f699ad52f991a1bc0a503c3ec4b2a696719e3c26591a87127f7305cc7e72f4c8e39355ebb06a5b1"
	"042990f38710ee7aa612ee4374bb82e878585a70a96c2a6b47f101a4ff154be4fd76a3167577a5cc54d9167c"
	"154c69ac35485e44cc898b719e1be3cc9c0fb5624b8f8a0dae10947a41bf848b6c1bb33d1006ec077d7e286e"
	"3f2a7b4843716390119449fe2721e81a5ed2333d331c7120765da58fadae73c19d9a8c4509cf8ac1e9d98b79"
	"9a5274509069739b5823f3fb496663820033426988eefca53e580e0f9e0dfe0992fc2e53a97e053639f98577"
	"058f995bdbd41cefdba50102032620012158203b8176b7504489cc593046d7988abb7905a742de6ac2cdc748"
	"a873c663e90cb12258201436d5edc9a75f23999eef9d5950a5c2455514ee1014084720f841a06b828a11";
static const char long_auth_ad[] =
	"bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b50d00000000";
static const char long_auth_cdj[] =
	"7b2274797065223a22776562617574686e2e676574222c226368616c6c656e6765223a22377833727057334f"
	"53505a307045664d396a75566d53574d36485a4935634f573875384d6f647047446a73222c226f726967696e"
	"223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c73657d";
static const char long_auth_sig[] =
	"304502203ecef83fb12a0cae7841055f9f87103a99fd14b424194bbf06c4623d3ee6e3fd022100d2ace346db"
	"262b1374a6b70faa51f518a42ddca13a4125ce6f5052a75bac9fb6";
static const char x5c_reg_cdj[] =
	"7b2274797065223a22776562617574686e2e637265617465222c226368616c6c656e6765223a227752684b58"
	"393334424634543345663153324831706c61325a725751475046746877365356756d56494249222c226f7269"
	"67696e223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c"
	"73652c22657874726144617461223a22636c69656e74446174614a534f4e206d617920626520657874656e64"
	"65642077697468206164646974696f6e616c206669656c647320696e20746865206675747572652c20737563"
	"6820617320746869733a20396138624e596a4b436757724258552d66436c316167227d";
static const char x5c_reg_att[] =
	"a363666d74667061636b65646761747453746d74a363616c6726637369675847304502203f19ec4b229f46ab"
	"8c45eff29b904ff10c0390dc40bf1216f04a78f4ceba3425022100fe7041a32759aff05a0f9f26c70a999c7a"
	"284451ba89234a1d3483c25e21925b637835638159022530820221308201c8a00302010202110088c220f83c"
	"8ef1feafe94deae45faad0300a06082a8648ce3d0403023062311e301c06035504030c15576562417574686e"
	"207465737420766563746f7273310c300a060355040a0c0357334331253023060355040b0c1c41757468656e"
	"74696361746f72204174746573746174696f6e204341310b30090603550406130241413020170d3234303130"
	"313030303030305a180f33303234303130313030303030305a305f311e301c06035504030c15576562417574"
	"686e207465737420766563746f7273310c300a060355040a0c0357334331223020060355040b0c1941757468"
	"656e74696361746f72204174746573746174696f6e310b30090603550406130241413059301306072a8648ce"
	"3d020106082a8648ce3d03010703420004a91ba4389409dd38a428141940ca8feb1ac0d7b4350558104a3777"
	"a49322f3798440f378b3398ab2d3bb7bf91322c92eb23556f59ad0a836fec4c7663b0e4dc3a360305e300c06"
	"03551d130101ff04023000300e0603551d0f0101ff040403020780301d0603551d0e04160414a589ba72d060"
	"842ab11f74fb246bdedab16f9b9b301f0603551d2304183016801445aff715b0dd786741fee996ebc16547a3"
	"931b1e300a06082a8648ce3d040302034700304402201726b9d85ecd8a5ed51163722ca3a20886fd9b242a0a"
	"a0453d442116075defd502207ef471e530ac87961a88a7f0d0c17b091ffc6b9238d30f79f635b417be5910e7"
	"68617574684461746158a4bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b54d"
	"00000000876ca4f52071c3e9b25509ef2cdf7ed60020c9a6f5b3462d02873fea0c56862234f99f081728084e"
	"511bb7760201a89054a5a50102032620012158201cf27f25da591208a4239c2e324f104f585525479a29edee"
	"dd830f48e77aeae522582059e4b7da6c0106e206ce390c93ab98a15a5ec3887e57f0cc2bece803b920c423";
static const char x5c_auth_ad[] =
	"bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b50d00000000";
static const char x5c_auth_cdj[] =
	"7b2274797065223a22776562617574686e2e676574222c226368616c6c656e6765223a227352427670477058"
	"7676463446524841565833496d4b4130453958773858306b526a44426c4d6668726255222c226f726967696e"
	"223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c73652c"
	"22657874726144617461223a22636c69656e74446174614a534f4e206d617920626520657874656e64656420"
	"77697468206164646974696f6e616c206669656c647320696e20746865206675747572652c20737563682061"
	"7320746869733a20415a4d77794d78496244382d756775464e7036723851227d";
static const char x5c_auth_sig[] =
	"30450220694969d3ee928de6f02ef23a9c644d7d779916451734a94b432542f498a1ebe90221008b0819c824"
	"218a97152cd099c55bfb1477b29d900a49a64018314f9bfccda163";
static const char rsa_reg_cdj[] =
	"7b2274797065223a22776562617574686e2e637265617465222c226368616c6c656e6765223a2276716a7764"
	"77414a76566679774e3976367039304f69666b7468752d6b6a79474c48717465705f49354b59222c226f7269"
	"67696e223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c"
	"73657d";
static const char rsa_reg_att[] =
	"a363666d74667061636b65646761747453746d74a363616c672663736967584730450221008b8c5c6ea8c142"
	"c032e0be69e1353d44461c5c9109941cdda951b976eb95b6b302204d52f406c19e254b3ff9589bd18070fb05"
	"5ac8db12fdd0a6734bea9d7168e900637835638159022630820222308201c7a00302010202101f6fb7a5ece8"
	"1b45896b983a995da5f3300a06082a8648ce3d0403023062311e301c06035504030c15576562417574686e20"
	"7465737420766563746f7273310c300a060355040a0c0357334331253023060355040b0c1c41757468656e74"
	"696361746f72204174746573746174696f6e204341310b30090603550406130241413020170d323430313031"
	"3030303030305a180f33303234303130313030303030305a305f311e301c06035504030c1557656241757468"
	"6e207465737420766563746f7273310c300a060355040a0c0357334331223020060355040b0c194175746865"
	"6e74696361746f72204174746573746174696f6e310b30090603550406130241413059301306072a8648ce3d"
	"020106082a8648ce3d03010703420004b7b36b7542a11120b443c794d0c99fdc25a06b76586413d81e086163"
	"ef6fe147a557afc34e2861d9057d6d465d4705a0310550bdeeb5f35ee35b9425ab859981a360305e300c0603"
	"551d130101ff04023000300e0603551d0f0101ff040403020780301d0603551d0e04160414fb37b647bccfb9"
	"e54d989eaaacc1633868703fb3301f0603551d2304183016801445aff715b0dd786741fee996ebc16547a393"
	"1b1e300a06082a8648ce3d0403020349003046022100b86bc129d92afca7d9869a39f70f139a305b4073a39e"
	"b654d81424bed5757d91022100cf9f7c60cab7c4a7d3e7f0020f281a93d4fd0a9f95121b989f56932a68885f"
	"ba68617574684461746159021bbfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4"
	"b55d00000000428f8878298b9862a36ad8c7527bfef20020992a18acc83f67533600c1138a4b4c4bd236de13"
	"629cf025ed17cb00b00b74dfa4010303390100205901b403ffffffffffffffffffffffffffffffffffffffff"
	"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
	"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
	"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
	"fffffffffffffff7ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
	"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
	"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff800000000000000000"
	"0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
	"0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
	"0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
	"000000000000000000000000000000000000012143010001";
static const char rsa_auth_ad[] =
	"bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b51900000000";
static const char rsa_auth_cdj[] =
	"7b2274797065223a22776562617574686e2e676574222c226368616c6c656e6765223a224b56395a39667150"
	"356978617970346e596d7834794e6f33617562597a5333536d75757459423462784d55222c226f726967696e"
	"223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c73657d";
static const char rsa_auth_sig[] =
	"01063d52d7c39b4d432fc7063c5d93e582bdcb16889cd71f888d67d880ea730a428498d3bc8e1ee11f2b1ecb"
	"e6c292b118c55ffaaddefa8cad0a54dd137c51f1eec673f1bb6c4d1789d6826a222b22d0f585fc901fdc9332"
	"12e579d199b89d672aa44891333e6a1355536025e82b25590256c3538229b55737083b2f6b9377e49e2472f1"
	"1952f79fdd0da180b5ffd901b4049a8f081bb40711bef76c62aed943571f2d0575304cb549d68d8892f95086"
	"a30f93716aee818f8dc06e96c0d5e0ed4cfa9fd8773d90464b68cf140f7986666ff9c9e3302acd0535d60d76"
	"9f465e2ab57ef8aabc89fccfef7ba32a64154a8b3d26be2298f470b8cc5377dbe3dfd4b0b45f8f01e63bde6c"
	"fc76b62771f9b70aa27cf40152cad93aa5acd784fd4b90f676e2ea828d0bf2400aebbaae4153e5838f537f88"
	"b6228346782a93a899be66ec77de45b3efcf311da6321c92e6b0cd11bfe653bf3e98cee8e341f02d67dbb6f9"
	"c98d9e8178090cfb5b70fbc6d541599ac794ae2f1d4de1286ec8de8c2daf7b1d15c8438e90d924df5c190452"
	"20a4c8438c1b979bbe016cf3d0eeec23c3999d4882cc645b776de930756612cdc6dd398160ff02a6";
static const char ed_reg_cdj[] =
	"7b2274797065223a22776562617574686e2e637265617465222c226368616c6c656e6765223a22714b763532"
	"723347734e396a526d733576616e6f6f306f303459557a656c6e7878586d5a426e6254733730222c226f7269"
	"67696e223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c"
	"73652c22657874726144617461223a22636c69656e74446174614a534f4e206d617920626520657874656e64"
	"65642077697468206164646974696f6e616c206669656c647320696e20746865206675747572652c20737563"
	"6820617320746869733a20425f44543567375a445f2d394f544c59583549764551227d";
static const char ed_reg_att[] =
	"a363666d74667061636b65646761747453746d74a363616c67266373696758483046022100d83f60bd802695"
	"37583218858aefb03ac57d45fa06e42feaae332d187f62da9f022100a02bd3cb6f7e1d283c93bad1f3f4b5a4"
	"c0494463da7fdbf256949116754d1f17637835638159022730820223308201c8a003020102021100b2cfc9ea"
	"33c8643b0e1a760463eaf164300a06082a8648ce3d0403023062311e301c06035504030c1557656241757468"
	"6e207465737420766563746f7273310c300a060355040a0c0357334331253023060355040b0c1c4175746865"
	"6e74696361746f72204174746573746174696f6e204341310b30090603550406130241413020170d32343031"
	"30313030303030305a180f33303234303130313030303030305a305f311e301c06035504030c155765624175"
	"74686e207465737420766563746f7273310c300a060355040a0c0357334331223020060355040b0c19417574"
	"68656e74696361746f72204174746573746174696f6e310b30090603550406130241413059301306072a8648"
	"ce3d020106082a8648ce3d03010703420004dd2b7a564b73b8c0b81c4c62e521925c4d1198ec9f583dbf1eeb"
	"e364b65cd9c29a9bdf346aaa81fb6b9507e5249a52fdaf8e39e26b0b7dc45992a7e233b70f70a360305e300c"
	"0603551d130101ff04023000300e0603551d0f0101ff040403020780301d0603551d0e041604140ae27546bc"
	"7eccb1b4b597bd354f0c0b1f1f8f8e301f0603551d2304183016801445aff715b0dd786741fee996ebc16547"
	"a3931b1e300a06082a8648ce3d0403020349003046022100a0d434ecb5fc3bfd7da5f41904517ad2836249f5"
	"61bd834ba7a438a8ab7a4ce8022100fac845bb7a02513b58e9f319654dbe49b0f02b95835bac568c71f8a18c"
	"dde9ab6861757468446174615881bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2"
	"e4b54100000000d5aa33581e8ca478e20fe713f5d32ff20020ce9f840ed96599580cd140fbc7bb3230633f50"
	"f61041aff73308ae71caa8a2bda401010327200621582044e06ddd331c36a8dc667bab52bcae63486c916aa5"
	"e339e6acebaa84934bf832";
static const char ed_auth_ad[] =
	"bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b50100000000";
static const char ed_auth_cdj[] =
	"7b2274797065223a22776562617574686e2e676574222c226368616c6c656e6765223a2269566c583442786a"
	"4f6d6d44534b4c596f7870557439736e364d48454f7943413135726947514a6e763949222c226f726967696e"
	"223a2268747470733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c73657d";
static const char ed_auth_sig[] =
	"f5c59c7e46c34f6f8cc197101ddf9934fa2595f68eb1913a637e8419eb9ba4cfdfc48f85393bc0d40b011f0d"
	"6fecb097d6607525713223a0dc0d453993dae00b";

static const char *const example_origins[] = { "https://example.org" };

struct vector {
	const char *name;     /* the spec's section title */
	const char *info;     /* the HKDF info string the spec derives it with */
	const char *reg_client_data, *attestation_object;
	const char *auth_data, *auth_client_data, *signature;
	/* HKDF salts of the AAGUID, the credential id and the authentication
	 * challenge; the registration challenge is always salt 00. */
	uint8_t aaguid_salt, cred_id_salt, auth_challenge_salt;
	size_t cred_id_len;
	int alg;
	const char *fmt;
	enum sw_webauthn_attestation_type attestation;
	bool resign;          /* the credential private key is HKDF salt 01 (not RSA's) */
	const char *key_altered_msg; /* the refusal when a key byte is flipped */
};

static const struct vector vectors[] = {
	{ "ES256 Credential with No Attestation", "none.ES256", none_reg_cdj, none_reg_att,
	  none_auth_ad, none_auth_cdj, none_auth_sig, 4, 5, 7, 32, SW_COSE_ES256, "none",
	  SW_WEBAUTHN_ATTESTATION_NONE, true, "credential public key is not a valid key" },
	{ "ES256 Credential with Self Attestation", "packed-self.ES256", self_reg_cdj,
	  self_reg_att, self_auth_ad, self_auth_cdj, self_auth_sig, 4, 5, 7, 32, SW_COSE_ES256,
	  "packed", SW_WEBAUTHN_ATTESTATION_SELF, true, "credential public key is not a valid key" },
	{ "ES256 Credential with very long credential ID", "none.ES256.long-credential-id",
	  long_reg_cdj, long_reg_att, long_auth_ad, long_auth_cdj, long_auth_sig, 3, 4, 6, 1023,
	  SW_COSE_ES256, "none", SW_WEBAUTHN_ATTESTATION_NONE, true,
	  "credential public key is not a valid key" },
	{ "Packed Attestation with ES256 Credential", "packed.ES256", x5c_reg_cdj, x5c_reg_att,
	  x5c_auth_ad, x5c_auth_cdj, x5c_auth_sig, 4, 5, 9, 32, SW_COSE_ES256, "packed",
	  SW_WEBAUTHN_ATTESTATION_X5C, true, "credential public key is not a valid key" },
	{ "Packed Attestation with RS256 Credential", "packed.RS256", rsa_reg_cdj, rsa_reg_att,
	  rsa_auth_ad, rsa_auth_cdj, rsa_auth_sig, 2, 3, 7, 32, SW_COSE_RS256, "packed",
	  SW_WEBAUTHN_ATTESTATION_X5C, false, "attestation signature invalid" },
	{ "Packed Attestation with Ed25519 Credential", "packed.EdDSA", ed_reg_cdj, ed_reg_att,
	  ed_auth_ad, ed_auth_cdj, ed_auth_sig, 4, 5, 9, 32, SW_COSE_EDDSA, "packed",
	  SW_WEBAUTHN_ATTESTATION_X5C, true, "attestation signature invalid" },
};

/* ---- helpers ---- */

static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = strlen(hex) / 2;
	if (n > cap)
		abort();
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			abort();
		out[i] = (uint8_t)v;
	}
	return n;
}

/* HKDF-SHA-256(IKM='WebAuthn test vectors', salt=h'<salt>', info, L=len):
 * how the spec derives each vector's random values. */
static void derive(uint8_t salt, const char *info, uint8_t *out, size_t len)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *ctx = EVP_KDF_CTX_new(kdf);
	char ikm[] = "WebAuthn test vectors";
	OSSL_PARAM params[] = {
		OSSL_PARAM_utf8_string(OSSL_KDF_PARAM_DIGEST, "SHA256", 0),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_KEY, ikm, strlen(ikm)),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_SALT, &salt, 1),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_INFO, (char *)info, strlen(info)),
		OSSL_PARAM_END,
	};
	if (!ctx || EVP_KDF_derive(ctx, out, len, params) != 1)
		abort();
	EVP_KDF_CTX_free(ctx);
	EVP_KDF_free(kdf);
}

static size_t find(const uint8_t *p, size_t n, const void *needle, size_t m)
{
	for (size_t i = 0; i + m <= n; i++)
		if (memcmp(p + i, needle, m) == 0)
			return i;
	return SIZE_MAX;
}

/* Replaces the first occurrence of from with to in buf[0..*len). */
static bool replace(uint8_t *buf, size_t *len, size_t cap, const char *from, const char *to)
{
	size_t fl = strlen(from), tl = strlen(to), at = find(buf, *len, from, fl);
	if (at == SIZE_MAX || *len - fl + tl > cap)
		return false;
	memmove(buf + at + tl, buf + at + fl, *len - at - fl);
	memcpy(buf + at, to, tl);
	*len = *len - fl + tl;
	return true;
}

/* Where authData's bytes start inside an attestation object, and the
 * offset of its byte-string head. */
static size_t auth_data_at(const uint8_t *att, size_t n, size_t *ret_head)
{
	size_t key = find(att, n, "\x68" "authData", 9);
	if (key == SIZE_MAX)
		abort();
	*ret_head = key + 9;
	return key + 9 + (att[key + 9] == 0x58 ? 2 : 3);
}

/* A minimal CBOR writer for building attestation objects. */
struct cbor_out {
	uint8_t b[8192];
	size_t n;
};

static void put_head(struct cbor_out *c, unsigned major, uint64_t v)
{
	uint8_t m = (uint8_t)(major << 5);
	if (v < 24) {
		c->b[c->n++] = m | (uint8_t)v;
	} else if (v < 0x100) {
		c->b[c->n++] = m | 24;
		c->b[c->n++] = (uint8_t)v;
	} else {
		c->b[c->n++] = m | 25;
		c->b[c->n++] = (uint8_t)(v >> 8);
		c->b[c->n++] = (uint8_t)v;
	}
}

static void put_bytes(struct cbor_out *c, const void *p, size_t n)
{
	put_head(c, 2, n);
	memcpy(c->b + c->n, p, n);
	c->n += n;
}

static void put_text(struct cbor_out *c, const char *s)
{
	put_head(c, 3, strlen(s));
	memcpy(c->b + c->n, s, strlen(s));
	c->n += strlen(s);
}

static void put_int(struct cbor_out *c, int64_t v)
{
	if (v >= 0)
		put_head(c, 0, (uint64_t)v);
	else
		put_head(c, 1, (uint64_t)(-1 - v));
}

/* {"fmt": "packed", "attStmt": {"alg", "sig"[, "x5c": [cert]]}, "authData"} */
static void build_packed(struct cbor_out *c, int alg, const uint8_t *sig, size_t sig_len,
			 const uint8_t *cert, size_t cert_len, const uint8_t *ad, size_t ad_len)
{
	c->n = 0;
	put_head(c, 5, 3);
	put_text(c, "fmt");
	put_text(c, "packed");
	put_text(c, "attStmt");
	put_head(c, 5, cert ? 3 : 2);
	put_text(c, "alg");
	put_int(c, alg);
	put_text(c, "sig");
	put_bytes(c, sig, sig_len);
	if (cert) {
		put_text(c, "x5c");
		put_head(c, 4, 1);
		put_bytes(c, cert, cert_len);
	}
	put_text(c, "authData");
	put_bytes(c, ad, ad_len);
}

static EVP_PKEY *private_key(const struct vector *v)
{
	uint8_t d[32];
	derive(1, v->info, d, sizeof(d));
	if (v->alg == SW_COSE_EDDSA)
		return EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, d, sizeof(d));
	EVP_PKEY *key = NULL;
	BIGNUM *bn = BN_bin2bn(d, sizeof(d), NULL);
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "P-256", 0);
	OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, bn);
	OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	if (EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_KEYPAIR, params) != 1)
		abort();
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn);
	return key;
}

/* Signs data || SHA-256(client_data) as an authenticator would. */
static size_t sign(EVP_PKEY *key, const uint8_t *data, size_t len, const uint8_t *client_data,
		   size_t client_data_len, uint8_t *sig, size_t cap)
{
	uint8_t msg[4096 + 32];
	if (len > 4096)
		abort();
	memcpy(msg, data, len);
	EVP_Digest(client_data, client_data_len, msg + len, NULL, EVP_sha256(), NULL);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	const char *md = EVP_PKEY_is_a(key, "ED25519") ? NULL : "SHA256";
	size_t n = cap;
	if (EVP_DigestSignInit_ex(ctx, NULL, md, NULL, NULL, key, NULL) != 1 ||
	    EVP_DigestSign(ctx, sig, &n, msg, len + 32) != 1)
		abort();
	EVP_MD_CTX_free(ctx);
	return n;
}

/* ---- one ceremony's inputs, loaded from a vector ---- */

struct ceremony {
	const struct vector *v;
	bool assertion;
	struct sw_webauthn_rp rp;
	uint8_t client_data[SW_WEBAUTHN_MAX_CLIENT_DATA + 1];
	size_t client_data_len;
	uint8_t challenge[32];
	uint8_t att[8192]; /* registration */
	size_t att_len;
	uint8_t ad[256];   /* authentication */
	size_t ad_len;
	uint8_t sig[SW_WEBAUTHN_MAX_SIGNATURE + 1];
	size_t sig_len;
	uint8_t key[SW_WEBAUTHN_MAX_PUBLIC_KEY];
	size_t key_len;
};

/* The authenticator data: inside the attestation object, or on its own. */
static uint8_t *auth_data(struct ceremony *c, size_t *ret_len)
{
	if (c->assertion) {
		*ret_len = c->ad_len;
		return c->ad;
	}
	size_t head, at = auth_data_at(c->att, c->att_len, &head);
	*ret_len = c->att[head] == 0x58 ? c->att[head + 1]
				       : (size_t)c->att[head + 1] << 8 | c->att[head + 2];
	return c->att + at;
}

static uint8_t *flags(struct ceremony *c)
{
	size_t len;
	return auth_data(c, &len) + 32;
}

/* The credential public key inside a registration's authenticator data. */
static uint8_t *cose_key(struct ceremony *c)
{
	uint8_t *ad = flags(c) - 32;
	return ad + 55 + ((size_t)ad[53] << 8 | ad[54]);
}

static int run(const struct ceremony *c, struct sw_webauthn_credential *cred,
	       struct sw_webauthn_assertion *out, char *err, size_t errlen)
{
	struct sw_webauthn_credential cred_local;
	struct sw_webauthn_assertion out_local;
	if (!c->assertion)
		return sw_webauthn_verify_registration(&c->rp, c->client_data, c->client_data_len,
						       c->att, c->att_len, c->challenge,
						       sizeof(c->challenge), cred ? cred : &cred_local,
						       err, errlen);
	return sw_webauthn_verify_assertion(&c->rp, c->client_data, c->client_data_len, c->ad,
					    c->ad_len, c->sig, c->sig_len, c->challenge,
					    sizeof(c->challenge), c->key, c->key_len,
					    out ? out : &out_local, err, errlen);
}

static void load_registration(struct ceremony *c, const struct vector *v)
{
	memset(c, 0, sizeof(*c));
	c->v = v;
	c->client_data_len = unhex(v->reg_client_data, c->client_data, sizeof(c->client_data));
	c->att_len = unhex(v->attestation_object, c->att, sizeof(c->att));
	derive(0, v->info, c->challenge, sizeof(c->challenge));
	c->rp = (struct sw_webauthn_rp){ "example.org", example_origins, 1,
					 (*flags(c) & SW_WEBAUTHN_FLAG_UV) != 0 };
}

/* Loads the vector's assertion, with the credential key as registration
 * stores it: the COSE_Key, the last item of every vector's authenticator
 * data (registration_test_vectors_verify checks that the two agree). */
static void load_assertion(struct ceremony *c, const struct vector *v)
{
	load_registration(c, v);
	c->key_len = (size_t)(c->att + c->att_len - cose_key(c));
	memcpy(c->key, cose_key(c), c->key_len);
	c->assertion = true;
	c->client_data_len = unhex(v->auth_client_data, c->client_data, sizeof(c->client_data));
	c->ad_len = unhex(v->auth_data, c->ad, sizeof(c->ad));
	c->sig_len = unhex(v->signature, c->sig, sizeof(c->sig));
	derive(v->auth_challenge_salt, v->info, c->challenge, sizeof(c->challenge));
	c->rp.require_user_verification = (c->ad[32] & SW_WEBAUTHN_FLAG_UV) != 0;
}

static void load(struct ceremony *c, const struct vector *v, bool assertion)
{
	if (assertion)
		load_assertion(c, v);
	else
		load_registration(c, v);
}

static void expect_refused(int *sw_failed_, const char *what, const struct ceremony *c,
			   const char *msg)
{
	char err[160] = "";
	int rc = run(c, NULL, NULL, err, sizeof(err));
	if (rc >= 0 || strcmp(err, msg) != 0) {
		fprintf(stderr, "  %s (%s), %s: rc %d \"%s\", wanted \"%s\"\n", c->v->name,
			c->assertion ? "authentication" : "registration", what, rc, err, msg);
		*sw_failed_ = 1;
	}
}

/* Signs the ceremony again after a change, with the vector's own private
 * key: the assertion, or the registration as packed self attestation. */
static void resign(struct ceremony *c, EVP_PKEY *key)
{
	size_t ad_len;
	uint8_t ad[2048];
	const uint8_t *orig = auth_data(c, &ad_len);
	memcpy(ad, orig, ad_len);
	uint8_t sig[128];
	size_t sig_len = sign(key, ad, ad_len, c->client_data, c->client_data_len, sig, sizeof(sig));
	if (c->assertion) {
		memcpy(c->sig, sig, sig_len);
		c->sig_len = sig_len;
		return;
	}
	struct cbor_out out;
	build_packed(&out, c->v->alg, sig, sig_len, NULL, 0, ad, ad_len);
	memcpy(c->att, out.b, out.n);
	c->att_len = out.n;
}

/* ---- the vectors verify ---- */

TEST(registration_test_vectors_verify)
{
	for (size_t i = 0; i < SW_ARRAY_SIZE(vectors); i++) {
		const struct vector *v = &vectors[i];
		struct ceremony c;
		load_registration(&c, v);
		struct sw_webauthn_credential cred;
		char err[160] = "";
		int rc = run(&c, &cred, NULL, err, sizeof(err));
		if (rc != 0)
			fprintf(stderr, "  %s: %d %s\n", v->name, rc, err);
		REQUIRE(rc == 0);
		uint8_t id[1023], aaguid[16];
		derive(v->cred_id_salt, v->info, id, v->cred_id_len);
		derive(v->aaguid_salt, v->info, aaguid, sizeof(aaguid));
		CHECK_INT_EQ(cred.id_len, v->cred_id_len);
		CHECK(memcmp(cred.id, id, v->cred_id_len) == 0);
		CHECK(memcmp(cred.aaguid, aaguid, 16) == 0);
		CHECK_INT_EQ(cred.alg, v->alg);
		CHECK_STR_EQ(cred.fmt, v->fmt);
		CHECK_INT_EQ(cred.attestation, v->attestation);
		CHECK_INT_EQ(cred.sign_count, 0);
		uint8_t f = *flags(&c);
		CHECK_INT_EQ(cred.user_verified, (f & SW_WEBAUTHN_FLAG_UV) != 0);
		CHECK_INT_EQ(cred.backup_eligible, (f & SW_WEBAUTHN_FLAG_BE) != 0);
		CHECK_INT_EQ(cred.backed_up, (f & SW_WEBAUTHN_FLAG_BS) != 0);
		CHECK_STR_EQ(sw_webauthn_device_type(&cred),
			     f & SW_WEBAUTHN_FLAG_BE ? "multiDevice" : "singleDevice");
		/* The stored key is the COSE_Key exactly as the authenticator sent it. */
		CHECK_INT_EQ(cred.public_key_len, c.att + c.att_len - cose_key(&c));
		CHECK(memcmp(cred.public_key_cose, cose_key(&c), cred.public_key_len) == 0);
		int alg = 0;
		CHECK_INT_EQ(sw_webauthn_check_public_key(cred.public_key_cose, cred.public_key_len,
							  &alg, err, sizeof(err)), 0);
		CHECK_INT_EQ(alg, v->alg);
	}
}

TEST(authentication_test_vectors_verify)
{
	for (size_t i = 0; i < SW_ARRAY_SIZE(vectors); i++) {
		struct ceremony c;
		load_assertion(&c, &vectors[i]);
		struct sw_webauthn_assertion out;
		char err[160] = "";
		int rc = run(&c, NULL, &out, err, sizeof(err));
		if (rc != 0)
			fprintf(stderr, "  %s: %d %s\n", vectors[i].name, rc, err);
		CHECK_INT_EQ(rc, 0);
		CHECK_INT_EQ(out.sign_count, 0);
		CHECK_INT_EQ(out.user_verified, (c.ad[32] & SW_WEBAUTHN_FLAG_UV) != 0);
		CHECK_INT_EQ(out.backup_eligible, (c.ad[32] & SW_WEBAUTHN_FLAG_BE) != 0);
		CHECK_INT_EQ(out.backed_up, (c.ad[32] & SW_WEBAUTHN_FLAG_BS) != 0);
	}
}

TEST(vectors_without_uv_are_refused_when_uv_is_required)
{
	int without_uv = 0;
	for (size_t i = 0; i < 2 * SW_ARRAY_SIZE(vectors); i++) {
		struct ceremony c;
		load(&c, &vectors[i / 2], i % 2);
		if (*flags(&c) & SW_WEBAUTHN_FLAG_UV)
			continue;
		without_uv++;
		c.rp.require_user_verification = true;
		expect_refused(sw_failed_, "UV required", &c, "user verification required");
	}
	CHECK(without_uv >= 4);
}

TEST(cross_origin_test_vectors_are_refused)
{
	static const struct vector cross[] = {
		{ "ES256 Credential with \"crossOrigin\": true in clientDataJSON",
		  "none.ES256.crossOrigin", xo_reg_cdj, xo_reg_att, xo_auth_ad, xo_auth_cdj,
		  xo_auth_sig, 4, 5, 7, 32, SW_COSE_ES256, "none", SW_WEBAUTHN_ATTESTATION_NONE,
		  true, NULL },
		{ "ES256 Credential with \"topOrigin\" in clientDataJSON", "none.ES256.topOrigin",
		  top_reg_cdj, top_reg_att, top_auth_ad, top_auth_cdj, top_auth_sig, 3, 4, 6, 32,
		  SW_COSE_ES256, "none", SW_WEBAUTHN_ATTESTATION_NONE, true, NULL },
	};
	for (size_t i = 0; i < 2 * SW_ARRAY_SIZE(cross); i++) {
		struct ceremony c;
		load(&c, &cross[i / 2], i % 2);
		c.rp.require_user_verification = false;
		expect_refused(sw_failed_, "as published", &c, "cross-origin ceremony not allowed");
		if (i == 0) {
			/* The refusal is our policy, not a broken vector: with
			 * crossOrigin false the (unsigned) registration passes. */
			replace(c.client_data, &c.client_data_len, sizeof(c.client_data),
				"\"crossOrigin\":true", "\"crossOrigin\":false");
			CHECK_INT_EQ(run(&c, NULL, NULL, NULL, 0), 0);
		}
	}
}

/* ---- every single-field mutation is refused ---- */

/* Each returns the message the refusal must carry, or NULL when the
 * mutation does not apply to this ceremony. */
typedef const char *(*mutation)(struct ceremony *c);

static const char *mut_expected_challenge(struct ceremony *c)
{
	c->challenge[31] ^= 0x01;
	return "challenge mismatch";
}

static const char *mut_client_challenge(struct ceremony *c)
{
	size_t at = find(c->client_data, c->client_data_len, "\"challenge\":\"", 13);
	uint8_t *ch = c->client_data + at + 13 + 5;
	*ch = *ch == 'A' ? 'B' : 'A';
	return "challenge mismatch";
}

static const char *mut_type(struct ceremony *c)
{
	const char *mine = c->assertion ? "webauthn.get" : "webauthn.create";
	const char *other = c->assertion ? "webauthn.create" : "webauthn.get";
	replace(c->client_data, &c->client_data_len, sizeof(c->client_data), mine, other);
	return "wrong client data type";
}

static const char *mut_origin(struct ceremony *c)
{
	replace(c->client_data, &c->client_data_len, sizeof(c->client_data),
		"\"https://example.org\"",
		c->assertion ? "\"http://example.org\"" : "\"https://example.org.evil.test\"");
	return "origin not allowed";
}

static const char *mut_cross_origin(struct ceremony *c)
{
	replace(c->client_data, &c->client_data_len, sizeof(c->client_data),
		"\"crossOrigin\":false", "\"crossOrigin\":true");
	return "cross-origin ceremony not allowed";
}

static const char *mut_top_origin(struct ceremony *c)
{
	replace(c->client_data, &c->client_data_len, sizeof(c->client_data), "\"crossOrigin\"",
		"\"topOrigin\":\"https://example.com\",\"crossOrigin\"");
	return "topOrigin not allowed";
}

static const char *mut_rp_id(struct ceremony *c)
{
	c->rp.rp_id = c->assertion ? "www.example.org" : "example.com";
	return "rpIdHash mismatch";
}

static const char *mut_rp_id_hash(struct ceremony *c)
{
	flags(c)[-1] ^= 0x80; /* the last byte of rpIdHash */
	return "rpIdHash mismatch";
}

static const char *mut_up(struct ceremony *c)
{
	*flags(c) &= (uint8_t)~SW_WEBAUTHN_FLAG_UP;
	return "user not present";
}

static const char *mut_uv(struct ceremony *c)
{
	*flags(c) &= (uint8_t)~SW_WEBAUTHN_FLAG_UV;
	c->rp.require_user_verification = true;
	return "user verification required";
}

static const char *mut_bs_without_be(struct ceremony *c)
{
	uint8_t *f = flags(c);
	*f = (uint8_t)((*f | SW_WEBAUTHN_FLAG_BS) & ~SW_WEBAUTHN_FLAG_BE);
	return "backup state set without backup eligibility";
}

static const char *mut_ed(struct ceremony *c)
{
	*flags(c) |= SW_WEBAUTHN_FLAG_ED;
	return "extensions are not a CBOR map";
}

static const char *mut_at(struct ceremony *c)
{
	*flags(c) ^= SW_WEBAUTHN_FLAG_AT;
	return c->assertion ? "unexpected attested credential data"
			    : "attested credential data missing";
}

static const char *mut_trailing(struct ceremony *c)
{
	if (c->assertion) {
		c->ad[c->ad_len++] = 0xa0; /* even an empty map needs the ED flag */
		return "leftover bytes in authenticator data";
	}
	c->att[c->att_len++] = 0x00;
	return "trailing bytes after attestation object";
}

static const char *mut_auth_data_leftover(struct ceremony *c)
{
	if (c->assertion)
		return NULL;
	/* authData is the last member of every vector's object: grow its
	 * byte string by one byte. */
	size_t head;
	auth_data_at(c->att, c->att_len, &head);
	if (c->att[head] == 0x58)
		c->att[head + 1]++;
	else if (++c->att[head + 2] == 0)
		c->att[head + 1]++;
	c->att[c->att_len++] = 0x00;
	return "leftover bytes in authenticator data";
}

static const char *mut_cred_id_len(struct ceremony *c)
{
	if (c->assertion)
		return NULL;
	uint8_t *ad = flags(c) - 32;
	size_t id_len = ((size_t)ad[53] << 8 | ad[54]) + 1;
	ad[53] = (uint8_t)(id_len >> 8);
	ad[54] = (uint8_t)id_len;
	/* Every vector's key starts a4/a5 01: one byte on, it is no map. */
	return id_len > SW_WEBAUTHN_MAX_CREDENTIAL_ID ? "credential id is longer than 1023 bytes"
						      : "credential public key is not a CBOR map";
}

static const char *mut_key_alg(struct ceremony *c)
{
	if (c->assertion)
		return NULL;
	uint8_t *alg = cose_key(c) + 4; /* every vector's key starts {1: kty, 3: alg */
	if (c->v->alg == SW_COSE_RS256) {
		alg[2] = 0x01; /* -258: not an algorithm we accept */
		return "unsupported credential algorithm";
	}
	*alg = c->v->alg == SW_COSE_ES256 ? 0x27 : 0x26; /* ES256 <-> EdDSA */
	return "credential key type does not match its algorithm";
}

static const char *mut_key_byte(struct ceremony *c)
{
	if (c->assertion)
		return NULL;
	cose_key(c)[12] ^= 0x01; /* inside x (EC2, OKP) or n (RSA) */
	return c->v->key_altered_msg;
}

static const char *mut_att_sig(struct ceremony *c)
{
	size_t at = find(c->att, c->att_len, "\x63" "sig" "\x58", 5);
	if (c->assertion || at == SIZE_MAX)
		return NULL;
	c->att[at + 6 + c->att[at + 5] - 1] ^= 0x01; /* the last byte of sig */
	return "attestation signature invalid";
}

static const char *mut_att_alg(struct ceremony *c)
{
	size_t at = find(c->att, c->att_len, "\x63" "alg" "\x26", 5);
	if (c->assertion || at == SIZE_MAX)
		return NULL;
	c->att[at + 4] = 0x27; /* ES256 -> EdDSA */
	return c->v->attestation == SW_WEBAUTHN_ATTESTATION_SELF
		       ? "attestation algorithm does not match the credential"
		       : "attestation algorithm does not match the certificate";
}

static const char *mut_fmt(struct ceremony *c)
{
	if (c->assertion)
		return NULL;
	if (!replace(c->att, &c->att_len, sizeof(c->att), "\x66packed", "\x66packee"))
		replace(c->att, &c->att_len, sizeof(c->att), "\x64none", "\x64nonf");
	return "unsupported attestation format";
}

static const char *mut_fmt_swapped(struct ceremony *c)
{
	if (c->assertion)
		return NULL;
	if (replace(c->att, &c->att_len, sizeof(c->att), "\x66packed", "\x64none"))
		return "attStmt must be empty for fmt none";
	replace(c->att, &c->att_len, sizeof(c->att), "\x64none", "\x66packed");
	return "packed attestation statement is malformed";
}

static const char *mut_sign_count(struct ceremony *c)
{
	if (!c->assertion)
		return NULL;
	c->ad[36] ^= 0x01; /* the counter is signed too */
	return "signature invalid";
}

static const char *mut_sig_middle(struct ceremony *c)
{
	if (!c->assertion)
		return NULL;
	c->sig[c->sig_len / 2] ^= 0x01;
	return "signature invalid";
}

static const char *mut_sig_last(struct ceremony *c)
{
	if (!c->assertion)
		return NULL;
	c->sig[c->sig_len - 1] ^= 0x80;
	return "signature invalid";
}

static const char *mut_sig_truncated(struct ceremony *c)
{
	if (!c->assertion)
		return NULL;
	c->sig_len--;
	return "signature invalid";
}

static const char *mut_client_data_bytes(struct ceremony *c)
{
	if (!c->assertion)
		return NULL;
	/* Same members, one more space: the hash, and so the signature, differ. */
	replace(c->client_data, &c->client_data_len, sizeof(c->client_data), "\"origin\":",
		"\"origin\": ");
	return "signature invalid";
}

static const char *mut_other_key(struct ceremony *c)
{
	if (!c->assertion)
		return NULL;
	struct ceremony other;
	load_assertion(&other, c->v == &vectors[0] ? &vectors[1] : &vectors[0]);
	memcpy(c->key, other.key, other.key_len);
	c->key_len = other.key_len;
	return "signature invalid";
}

static const struct {
	const char *what;
	mutation apply;
} mutations[] = {
	{ "expected challenge", mut_expected_challenge },
	{ "challenge in clientDataJSON", mut_client_challenge },
	{ "type", mut_type },
	{ "origin", mut_origin },
	{ "crossOrigin true", mut_cross_origin },
	{ "topOrigin", mut_top_origin },
	{ "rp id", mut_rp_id },
	{ "rpIdHash", mut_rp_id_hash },
	{ "UP cleared", mut_up },
	{ "UV cleared", mut_uv },
	{ "BS without BE", mut_bs_without_be },
	{ "ED without extensions", mut_ed },
	{ "AT flipped", mut_at },
	{ "trailing byte", mut_trailing },
	/* registration */
	{ "byte after the credential key", mut_auth_data_leftover },
	{ "credential id length", mut_cred_id_len },
	{ "credential key alg", mut_key_alg },
	{ "credential key byte", mut_key_byte },
	{ "attestation signature byte", mut_att_sig },
	{ "attestation alg", mut_att_alg },
	{ "fmt", mut_fmt },
	{ "fmt none <-> packed", mut_fmt_swapped },
	/* authentication */
	{ "signCount", mut_sign_count },
	{ "signature middle byte", mut_sig_middle },
	{ "signature last byte", mut_sig_last },
	{ "signature truncated", mut_sig_truncated },
	{ "clientDataJSON bytes", mut_client_data_bytes },
	{ "another credential's key", mut_other_key },
};

TEST(single_field_mutations_of_every_vector_are_refused)
{
	int applied = 0;
	for (size_t i = 0; i < 2 * SW_ARRAY_SIZE(vectors); i++) {
		for (size_t m = 0; m < SW_ARRAY_SIZE(mutations); m++) {
			struct ceremony c;
			load(&c, &vectors[i / 2], i % 2);
			const char *msg = mutations[m].apply(&c);
			if (!msg)
				continue;
			applied++;
			expect_refused(sw_failed_, mutations[m].what, &c, msg);
		}
	}
	/* 6 vectors: 14 shared + 8 registration mutations (attestation sig
	 * and alg do not apply to the 2 "none") + 14 + 6 authentication. */
	CHECK_INT_EQ(applied, 6 * (14 + 8) - 4 + 6 * (14 + 6));
}

/* Each ceremony re-signed after the change with the vector's own private
 * key: a valid signature must not carry a bad flag or rpIdHash through,
 * and the counter is reported, whatever it is. */
TEST(resigned_mutations_are_refused_by_their_own_check)
{
	static const struct {
		const char *what, *msg;
		uint8_t clear, set, hash_xor, counter;
	} cases[] = {
		{ "counter 7", NULL, 0, 0, 0, 7 },
		{ "counter 0 after 7", NULL, 0, 0, 0, 0 },
		{ "UP cleared", "user not present", SW_WEBAUTHN_FLAG_UP, 0, 0, 1 },
		{ "UV cleared", "user verification required", SW_WEBAUTHN_FLAG_UV, 0, 0, 1 },
		{ "BS without BE", "backup state set without backup eligibility",
		  SW_WEBAUTHN_FLAG_BE, SW_WEBAUTHN_FLAG_BS, 0, 1 },
		{ "rpIdHash", "rpIdHash mismatch", 0, 0, 0x01, 1 },
	};
	int resigned = 0;
	for (size_t i = 0; i < 2 * SW_ARRAY_SIZE(vectors); i++) {
		if (!vectors[i / 2].resign)
			continue;
		EVP_PKEY *key = private_key(&vectors[i / 2]);
		for (size_t k = 0; k < SW_ARRAY_SIZE(cases); k++) {
			struct ceremony c;
			load(&c, &vectors[i / 2], i % 2);
			c.rp.require_user_verification = true;
			uint8_t *f = flags(&c);
			*f = (uint8_t)(((*f | SW_WEBAUTHN_FLAG_UV) & ~cases[k].clear) | cases[k].set);
			f[-32] ^= cases[k].hash_xor;
			f[4] = cases[k].counter;
			resign(&c, key);
			resigned++;
			if (cases[k].msg) {
				expect_refused(sw_failed_, cases[k].what, &c, cases[k].msg);
				continue;
			}
			struct sw_webauthn_credential cred;
			struct sw_webauthn_assertion out;
			char err[160] = "";
			CHECK_INT_EQ(run(&c, &cred, &out, err, sizeof(err)), 0);
			CHECK_INT_EQ(c.assertion ? out.sign_count : cred.sign_count, cases[k].counter);
			CHECK(c.assertion ? out.user_verified : cred.user_verified);
			if (!c.assertion)
				CHECK_INT_EQ(cred.attestation, SW_WEBAUTHN_ATTESTATION_SELF);
		}
		EVP_PKEY_free(key);
	}
	CHECK_INT_EQ(resigned, 2 * 5 * (int)SW_ARRAY_SIZE(cases));
}

/* ---- packed x5c: the certificate requirements of §8.2.1 ---- */

struct cert_spec {
	long version;
	const char *ou;
	bool ca;
	const uint8_t *aaguid; /* the AAGUID extension's value, or NULL: none */
	bool aaguid_critical;
};

static size_t make_cert(EVP_PKEY *key, const struct cert_spec *s, uint8_t *out, size_t cap)
{
	X509 *x = X509_new();
	X509_set_version(x, s->version);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_NAME *name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "C", MBSTRING_ASC, (const unsigned char *)"AA", -1, -1, 0);
	X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"Steward", -1, -1, 0);
	X509_NAME_add_entry_by_txt(name, "OU", MBSTRING_ASC, (const unsigned char *)s->ou, -1, -1, 0);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"test", -1, -1, 0);
	X509_set_issuer_name(x, name);
	X509_set_pubkey(x, key);
	if (s->version == X509_VERSION_3) {
		X509_EXTENSION *bc = X509V3_EXT_conf_nid(NULL, NULL, NID_basic_constraints,
							 s->ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
		X509_add_ext(x, bc, -1);
		X509_EXTENSION_free(bc);
	}
	if (s->aaguid) {
		uint8_t der[18] = { 0x04, 16 };
		memcpy(der + 2, s->aaguid, 16);
		ASN1_OCTET_STRING *os = ASN1_OCTET_STRING_new();
		ASN1_OCTET_STRING_set(os, der, sizeof(der));
		ASN1_OBJECT *oid = OBJ_txt2obj("1.3.6.1.4.1.45724.1.1.4", 1);
		X509_EXTENSION *ext = X509_EXTENSION_create_by_OBJ(NULL, oid, s->aaguid_critical, os);
		X509_add_ext(x, ext, -1);
		X509_EXTENSION_free(ext);
		ASN1_OBJECT_free(oid);
		ASN1_OCTET_STRING_free(os);
	}
	if (X509_sign(x, key, EVP_sha256()) == 0)
		abort();
	int n = i2d_X509(x, NULL);
	if (n <= 0 || (size_t)n > cap)
		abort();
	uint8_t *p = out;
	i2d_X509(x, &p);
	X509_free(x);
	return (size_t)n;
}

/* Registers the packed-self vector's authenticator data with an x5c
 * statement: signed by sign_key, with a certificate for cert_key. */
static int register_x5c(const struct cert_spec *s, EVP_PKEY *cert_key, EVP_PKEY *sign_key,
			int alg, size_t cert_extra, char *err, size_t errlen)
{
	struct ceremony r;
	load_registration(&r, &vectors[1]);
	size_t ad_len;
	uint8_t ad[1024], cert[2048], sig[80];
	const uint8_t *orig = auth_data(&r, &ad_len);
	memcpy(ad, orig, ad_len);
	size_t cert_len = make_cert(cert_key, s, cert, sizeof(cert) - cert_extra) + cert_extra;
	memset(cert + cert_len - cert_extra, 0, cert_extra);
	size_t sig_len = sign(sign_key, ad, ad_len, r.client_data, r.client_data_len, sig, sizeof(sig));
	struct cbor_out c;
	build_packed(&c, alg, sig, sig_len, cert, cert_len, ad, ad_len);
	memcpy(r.att, c.b, c.n);
	r.att_len = c.n;
	struct sw_webauthn_credential cred;
	int rc = run(&r, &cred, NULL, err, errlen);
	if (rc == 0 && cred.attestation != SW_WEBAUTHN_ATTESTATION_X5C)
		return -1;
	return rc;
}

TEST(packed_x5c_certificate_requirements_are_enforced)
{
	uint8_t aaguid[16], other[16];
	derive(4, vectors[1].info, aaguid, sizeof(aaguid));
	memcpy(other, aaguid, 16);
	other[15] ^= 1;
	EVP_PKEY *key = EVP_EC_gen("P-256"), *stranger = EVP_EC_gen("P-256");
	REQUIRE(key && stranger);
	const char *ou = "Authenticator Attestation";
	struct {
		const char *what;
		struct cert_spec spec;
		EVP_PKEY *signer;
		int alg;
		size_t extra;
		const char *msg; /* NULL: accepted */
	} cases[] = {
		{ "conforming", { X509_VERSION_3, ou, false, aaguid, false }, key, -7, 0, NULL },
		{ "no AAGUID extension", { X509_VERSION_3, ou, false, NULL, false }, key, -7, 0, NULL },
		{ "version 1", { X509_VERSION_1, ou, false, NULL, false }, key, -7, 0,
		  "attestation certificate is not version 3" },
		{ "OU", { X509_VERSION_3, "Authenticator Attestation CA", false, aaguid, false }, key,
		  -7, 0, "attestation certificate subject is not as required" },
		{ "CA", { X509_VERSION_3, ou, true, aaguid, false }, key, -7, 0,
		  "attestation certificate is a CA" },
		{ "AAGUID", { X509_VERSION_3, ou, false, other, false }, key, -7, 0,
		  "attestation certificate AAGUID mismatch" },
		{ "critical AAGUID", { X509_VERSION_3, ou, false, aaguid, true }, key, -7, 0,
		  "attestation certificate AAGUID extension is invalid" },
		{ "signed by another key", { X509_VERSION_3, ou, false, aaguid, false }, stranger, -7,
		  0, "attestation signature invalid" },
		{ "alg RS256 for an EC certificate", { X509_VERSION_3, ou, false, aaguid, false }, key,
		  -257, 0, "attestation algorithm does not match the certificate" },
		{ "bytes after the certificate", { X509_VERSION_3, ou, false, aaguid, false }, key, -7,
		  1, "x5c holds an invalid certificate" },
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(cases); i++) {
		char err[160] = "";
		int rc = register_x5c(&cases[i].spec, key, cases[i].signer, cases[i].alg,
				      cases[i].extra, err, sizeof(err));
		bool ok = cases[i].msg ? rc < 0 && strcmp(err, cases[i].msg) == 0 : rc == 0;
		if (!ok) {
			fprintf(stderr, "  %s: rc %d \"%s\"\n", cases[i].what, rc, err);
			*sw_failed_ = 1;
		}
	}
	EVP_PKEY_free(key);
	EVP_PKEY_free(stranger);
}

/* ---- CBOR and COSE that must be refused before anything is trusted ---- */

/* {"fmt": "none", [extra_key: extra_text,] "attStmt": {}, "authData": ...}
 * up to authData's value, which the caller appends. */
static void none_object(struct cbor_out *c, const char *extra_key, const char *extra_text)
{
	c->n = 0;
	put_head(c, 5, extra_key ? 4 : 3);
	put_text(c, "fmt");
	put_text(c, "none");
	if (extra_key) {
		put_text(c, extra_key);
		put_text(c, extra_text);
	}
	put_text(c, "attStmt");
	put_head(c, 5, 0);
	put_text(c, "authData");
}

static int register_raw(const uint8_t *att, size_t len, char *err, size_t errlen)
{
	struct ceremony r;
	load_registration(&r, &vectors[0]);
	struct sw_webauthn_credential cred;
	return sw_webauthn_verify_registration(&r.rp, r.client_data, r.client_data_len, att, len,
					       r.challenge, sizeof(r.challenge), &cred, err, errlen);
}

TEST(malformed_attestation_cbor_is_refused)
{
	struct ceremony r;
	load_registration(&r, &vectors[0]);
	size_t ad_len;
	const uint8_t *ad = auth_data(&r, &ad_len);
	static uint8_t buf[SW_WEBAUTHN_MAX_ATTESTATION + 2];
	char err[160];
	struct cbor_out c;

	/* An indefinite-length map holding the same members. */
	none_object(&c, NULL, NULL);
	c.b[0] = 0xbf;
	put_bytes(&c, ad, ad_len);
	c.b[c.n++] = 0xff;
	CHECK_INT_EQ(register_raw(c.b, c.n, err, sizeof(err)), -EBADMSG);
	CHECK_STR_EQ(err, "attestation object is not valid CBOR");

	/* An array claiming 2^64 - 1 items in 9 bytes: refused, not allocated. */
	const uint8_t huge[] = { 0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	CHECK_INT_EQ(register_raw(huge, sizeof(huge), err, sizeof(err)), -EBADMSG);
	const uint8_t long_text[] = { 0x7a, 0xff, 0xff, 0xff, 0xf0, 'x' };
	CHECK_INT_EQ(register_raw(long_text, sizeof(long_text), err, sizeof(err)), -EBADMSG);

	/* Nesting: 16 levels below the top are read (and found not to be a
	 * map), 17 are refused as malformed. */
	memset(buf, 0x81, 17);
	buf[16] = 0x00;
	CHECK_INT_EQ(register_raw(buf, 17, err, sizeof(err)), -EBADMSG);
	CHECK_STR_EQ(err, "attestation object is not a CBOR map");
	memset(buf, 0x81, 18);
	buf[17] = 0x00;
	CHECK_INT_EQ(register_raw(buf, 18, err, sizeof(err)), -EBADMSG);
	CHECK_STR_EQ(err, "attestation object is not valid CBOR");

	/* fmt twice. */
	none_object(&c, "fmt", "packed");
	put_bytes(&c, ad, ad_len);
	CHECK_INT_EQ(register_raw(c.b, c.n, err, sizeof(err)), -EBADMSG);
	CHECK_STR_EQ(err, "attestation object must hold fmt, attStmt and authData once each");

	/* authData as a text string. */
	none_object(&c, NULL, NULL);
	put_text(&c, "not a byte string");
	CHECK_INT_EQ(register_raw(c.b, c.n, err, sizeof(err)), -EBADMSG);
	CHECK_STR_EQ(err, "attestation object must hold fmt, attStmt and authData once each");

	/* Over the size bound: refused before parsing. */
	memcpy(buf, r.att, r.att_len);
	CHECK_INT_EQ(register_raw(buf, SW_WEBAUTHN_MAX_ATTESTATION + 1, err, sizeof(err)), -E2BIG);
	CHECK_INT_EQ(register_raw(buf, 0, err, sizeof(err)), -EBADMSG);
}

TEST(credential_id_over_1023_bytes_is_refused)
{
	/* The long-credential-id vector carries exactly 1023 bytes (accepted
	 * above); one more byte is over the bound. */
	struct ceremony r;
	load_registration(&r, &vectors[2]);
	size_t ad_len, head;
	uint8_t *ad = auth_data(&r, &ad_len);
	size_t at = auth_data_at(r.att, r.att_len, &head);
	memmove(ad + 56, ad + 55, r.att_len - (at + 55));
	r.att_len++;
	ad[53] = 0x04;
	ad[54] = 0x00;
	ad_len++;
	r.att[head + 1] = (uint8_t)(ad_len >> 8);
	r.att[head + 2] = (uint8_t)ad_len;
	expect_refused(sw_failed_, "1024 bytes", &r, "credential id is longer than 1023 bytes");
}

static int check_key(const uint8_t *p, size_t n, int *alg)
{
	char err[160];
	return sw_webauthn_check_public_key(p, n, alg, err, sizeof(err));
}

/* An EC2 COSE_Key whose coordinates are all 0x01 bytes. */
static void ec2_key(struct cbor_out *c, int alg, int crv, size_t coord_len)
{
	uint8_t coord[66];
	memset(coord, 0x01, coord_len);
	c->n = 0;
	put_head(c, 5, 5);
	put_int(c, 1), put_int(c, 2), put_int(c, 3), put_int(c, alg);
	put_int(c, -1), put_int(c, crv);
	put_int(c, -2), put_bytes(c, coord, coord_len);
	put_int(c, -3), put_bytes(c, coord, coord_len);
}

TEST(cose_keys_outside_our_algorithms_and_sizes_are_refused)
{
	struct cbor_out c;
	uint8_t coord[520];
	int alg = 0;

	/* ES384 (alg -35, P-384): well-formed, not ours. */
	ec2_key(&c, -35, 2, 48);
	CHECK_INT_EQ(check_key(c.b, c.n, &alg), -ENOTSUP);
	/* P-256 coordinates that are not a point on the curve. */
	ec2_key(&c, -7, 1, 32);
	CHECK_INT_EQ(check_key(c.b, c.n, &alg), -EBADMSG);

	/* RSA: 1024 and 4104 bits are refused, 2048 accepted. */
	const uint8_t e[] = { 0x01, 0x00, 0x01 };
	size_t sizes[] = { 128, 256, 513 };
	int want[] = { -EBADMSG, 0, -EBADMSG };
	for (size_t i = 0; i < SW_ARRAY_SIZE(sizes); i++) {
		memset(coord, 0xc5, sizes[i]);
		c.n = 0;
		put_head(&c, 5, 4);
		put_int(&c, 1), put_int(&c, 3), put_int(&c, 3), put_int(&c, -257);
		put_int(&c, -1), put_bytes(&c, coord, sizes[i]), put_int(&c, -2),
			put_bytes(&c, e, sizeof(e));
		CHECK_INT_EQ(check_key(c.b, c.n, &alg), want[i]);
	}
	CHECK_INT_EQ(alg, SW_COSE_RS256);

	/* A label twice, and a byte after the key. */
	memset(coord, 0x22, 32);
	c.n = 0;
	put_head(&c, 5, 5);
	put_int(&c, 1), put_int(&c, 1), put_int(&c, 3), put_int(&c, -8);
	put_int(&c, -1), put_int(&c, 6), put_int(&c, -2), put_bytes(&c, coord, 32);
	put_int(&c, 3), put_int(&c, -8);
	CHECK_INT_EQ(check_key(c.b, c.n, &alg), -EBADMSG);
	c.n = 0;
	put_head(&c, 5, 4);
	put_int(&c, 1), put_int(&c, 1), put_int(&c, 3), put_int(&c, -8);
	put_int(&c, -1), put_int(&c, 6), put_int(&c, -2), put_bytes(&c, coord, 32);
	CHECK_INT_EQ(check_key(c.b, c.n, &alg), 0);
	CHECK_INT_EQ(alg, SW_COSE_EDDSA);
	c.b[c.n++] = 0x00;
	CHECK_INT_EQ(check_key(c.b, c.n, &alg), -EBADMSG);
}

/* ---- clientDataJSON ---- */

static int client_data(const struct sw_webauthn_rp *rp, const char *json, char *err)
{
	static const uint8_t challenge[] = "0123456789abcdef"; /* "MDEyMzQ1Njc4OWFiY2RlZg" */
	return sw_webauthn_check_client_data(rp, "webauthn.get", (const uint8_t *)json,
					     strlen(json), challenge, 16, err, 160);
}

#define CD(origin_and_more) \
	"{\"type\":\"webauthn.get\",\"challenge\":\"MDEyMzQ1Njc4OWFiY2RlZg\",\"origin\":" origin_and_more "}"

TEST(client_data_is_parsed_strictly)
{
	const char *origins[] = { "https://steward.example", "https://example.org" };
	struct sw_webauthn_rp rp = { "example.org", origins, 2, true };
	char err[160];
	CHECK_INT_EQ(client_data(&rp, CD("\"https://example.org\""), err), 0);
	CHECK_INT_EQ(client_data(&rp, CD("\"https://steward.example\",\"crossOrigin\":false"), err), 0);
	struct {
		const char *json;
		int rc;
		const char *msg;
	} cases[] = {
		{ CD("\"https://evil.test\",\"origin\":\"https://example.org\""), -EBADMSG,
		  "clientDataJSON is not a valid JSON object" },
		{ "[1]", -EBADMSG, "clientDataJSON is not a valid JSON object" },
		{ "", -EBADMSG, "clientDataJSON is empty" },
		{ "{\"type\":\"webauthn.get\",\"challenge\":\"MDEyMzQ1Njc4OWFiY2RlZg\"}", -EBADMSG,
		  "clientDataJSON lacks type, challenge or origin" },
		{ CD("\"https://example.org\",\"crossOrigin\":\"false\""), -EBADMSG,
		  "clientDataJSON lacks type, challenge or origin" },
		{ CD("\"https://example.org/\""), -EPERM, "origin not allowed" },
		{ CD("\"https://Example.org\""), -EPERM, "origin not allowed" },
		{ CD("\"https://example.org:443\""), -EPERM, "origin not allowed" },
		{ "{\"type\":\"webauthn.get\",\"challenge\":\"MDEyMzQ1Njc4OWFiY2RlZg==\","
		  "\"origin\":\"https://example.org\"}", -EPERM, "challenge mismatch" },
		{ "{\"type\":\"webauthn.get\",\"challenge\":\"MDEyMzQ1Njc4OWFiY2RlZh\","
		  "\"origin\":\"https://example.org\"}", -EPERM, "challenge mismatch" },
		{ "{\"type\":\"webauthn.get\",\"challenge\":\"MDEyMzQ1Njc4OWFiY2Rl\","
		  "\"origin\":\"https://example.org\"}", -EPERM, "challenge mismatch" },
		{ "{\"type\":\"webauthn.create\",\"challenge\":\"MDEyMzQ1Njc4OWFiY2RlZg\","
		  "\"origin\":\"https://example.org\"}", -EPERM, "wrong client data type" },
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(cases); i++) {
		err[0] = '\0';
		int rc = client_data(&rp, cases[i].json, err);
		if (rc != cases[i].rc || strcmp(err, cases[i].msg) != 0) {
			fprintf(stderr, "  case %zu: rc %d \"%s\"\n", i, rc, err);
			*sw_failed_ = 1;
		}
	}
}

TEST(client_data_over_4096_bytes_is_refused)
{
	struct sw_webauthn_rp rp = { "example.org", example_origins, 1, true };
	static char json[SW_WEBAUTHN_MAX_CLIENT_DATA + 2];
	const char *head = CD("\"https://example.org\"");
	size_t n = strlen(head);
	memset(json, ' ', sizeof(json) - 1);
	memcpy(json, head, n); /* trailing whitespace is valid JSON */
	json[SW_WEBAUTHN_MAX_CLIENT_DATA] = '\0';
	char err[160];
	CHECK_INT_EQ(client_data(&rp, json, err), 0);
	json[SW_WEBAUTHN_MAX_CLIENT_DATA] = ' ';
	json[SW_WEBAUTHN_MAX_CLIENT_DATA + 1] = '\0';
	CHECK_INT_EQ(client_data(&rp, json, err), -E2BIG);
}

TEST(oversized_assertion_inputs_are_refused)
{
	struct ceremony a;
	load_assertion(&a, &vectors[0]);
	struct sw_webauthn_assertion out;
	char err[160];
	a.sig_len = SW_WEBAUTHN_MAX_SIGNATURE + 1;
	CHECK_INT_EQ(run(&a, NULL, &out, err, sizeof(err)), -E2BIG);
	static uint8_t ad[SW_WEBAUTHN_MAX_AUTH_DATA + 1];
	load_assertion(&a, &vectors[0]);
	CHECK_INT_EQ(sw_webauthn_verify_assertion(&a.rp, a.client_data, a.client_data_len, ad,
						  sizeof(ad), a.sig, a.sig_len, a.challenge, 32,
						  a.key, a.key_len, &out, err, sizeof(err)),
		     -E2BIG);
}

/* ---- base64url ---- */

TEST(base64url_matches_rfc4648_without_padding)
{
	const char *plain[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	const char *coded[] = { "", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(plain); i++) {
		char out[16];
		CHECK_INT_EQ(sw_base64url_encode((const uint8_t *)plain[i], strlen(plain[i]), out,
						 sizeof(out)),
			     strlen(coded[i]));
		CHECK_STR_EQ(out, coded[i]);
		uint8_t back[16];
		size_t n = 99;
		CHECK_INT_EQ(sw_base64url_decode(sw_str_cstr(coded[i]), back, sizeof(back), &n), 0);
		CHECK(n == strlen(plain[i]) && memcmp(back, plain[i], n) == 0);
	}
	const uint8_t url[] = { 0xfb, 0xff, 0xbf };
	char out[8];
	CHECK_INT_EQ(sw_base64url_encode(url, 3, out, sizeof(out)), 4);
	CHECK_STR_EQ(out, "-_-_");
	CHECK_INT_EQ(sw_base64url_encode(url, 3, out, 4), -ENOSPC);
}

TEST(base64url_decode_accepts_only_the_canonical_form)
{
	uint8_t out[16];
	size_t n;
	const char *bad[] = { "Zg==", "Zh", "Z", "Zm+v", "Zm/v", "Zm 9v", "Zm9v\n", "Zm9vY" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad); i++)
		CHECK_INT_EQ(sw_base64url_decode(sw_str_cstr(bad[i]), out, sizeof(out), &n), -EINVAL);
	CHECK_INT_EQ(sw_base64url_decode(SW_STR("Zm9vYmFy"), out, 5, &n), -ENOSPC);
	/* Every length round-trips. */
	uint8_t in[64], back[64];
	char text[100];
	for (size_t len = 0; len <= sizeof(in); len++) {
		for (size_t i = 0; i < len; i++)
			in[i] = (uint8_t)(i * 37 + len);
		int m = sw_base64url_encode(in, len, text, sizeof(text));
		CHECK(m >= 0 && sw_base64url_decode(sw_str_from(text, (size_t)m), back,
						    sizeof(back), &n) == 0 &&
		      n == len && memcmp(in, back, len) == 0);
	}
}

TEST_MAIN()
