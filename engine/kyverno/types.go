package kyverno

// This file holds the policy model: the kyverno.io/v1 and v2beta1
// ClusterPolicy / Policy documents as they are written. The compiled,
// evaluation-ready form is policy.Policy.
//
// Free-form JSON (patterns, condition keys and values, variable values) is
// decoded into `any`: maps, lists, strings, float64, bool and nil.

// Document is a ClusterPolicy or Policy as written.
type Document struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   ObjectMeta `json:"metadata"`
	Spec       Spec       `json:"spec"`
	Status     any        `json:"status,omitempty"`
}

// ObjectMeta is metav1.ObjectMeta. As in Kyverno's CLI, DecodePolicies
// rejects other metadata fields.
type ObjectMeta struct {
	Name                       string            `json:"name,omitempty"`
	GenerateName               string            `json:"generateName,omitempty"`
	Namespace                  string            `json:"namespace,omitempty"`
	UID                        string            `json:"uid,omitempty"`
	ResourceVersion            string            `json:"resourceVersion,omitempty"`
	Generation                 int64             `json:"generation,omitempty"`
	Labels                     map[string]string `json:"labels,omitempty"`
	Annotations                map[string]string `json:"annotations,omitempty"`
	CreationTimestamp          any               `json:"creationTimestamp,omitempty"`
	DeletionTimestamp          any               `json:"deletionTimestamp,omitempty"`
	DeletionGracePeriodSeconds *int64            `json:"deletionGracePeriodSeconds,omitempty"`
	OwnerReferences            []any             `json:"ownerReferences,omitempty"`
	Finalizers                 []string          `json:"finalizers,omitempty"`
	ManagedFields              []any             `json:"managedFields,omitempty"`
	SelfLink                   string            `json:"selfLink,omitempty"`
}

// Spec is the policy spec.
type Spec struct {
	Rules                            []Rule                            `json:"rules,omitempty"`
	ApplyRules                       string                            `json:"applyRules,omitempty"`
	FailurePolicy                    string                            `json:"failurePolicy,omitempty"`
	ValidationFailureAction          string                            `json:"validationFailureAction,omitempty"`
	ValidationFailureActionOverrides []ValidationFailureActionOverride `json:"validationFailureActionOverrides,omitempty"`
	EmitWarning                      *bool                             `json:"emitWarning,omitempty"`
	Admission                        *bool                             `json:"admission,omitempty"`
	Background                       *bool                             `json:"background,omitempty"`
	SchemaValidation                 *bool                             `json:"schemaValidation,omitempty"`
	WebhookTimeoutSeconds            *int32                            `json:"webhookTimeoutSeconds,omitempty"`
	MutateExistingOnPolicyUpdate     bool                              `json:"mutateExistingOnPolicyUpdate,omitempty"`
	GenerateExistingOnPolicyUpdate   *bool                             `json:"generateExistingOnPolicyUpdate,omitempty"`
	GenerateExisting                 bool                              `json:"generateExisting,omitempty"`
	UseServerSideApply               bool                              `json:"useServerSideApply,omitempty"`
	WebhookConfiguration             *WebhookConfiguration             `json:"webhookConfiguration,omitempty"`
}

// ValidationFailureActionOverride sets the failure action for namespaces.
type ValidationFailureActionOverride struct {
	Action            string         `json:"action,omitempty"`
	Namespaces        []string       `json:"namespaces,omitempty"`
	NamespaceSelector *LabelSelector `json:"namespaceSelector,omitempty"`
}

// WebhookConfiguration tunes the webhook Kyverno registers for the policy.
type WebhookConfiguration struct {
	FailurePolicy   string           `json:"failurePolicy,omitempty"`
	TimeoutSeconds  *int32           `json:"timeoutSeconds,omitempty"`
	MatchConditions []MatchCondition `json:"matchConditions,omitempty"`
}

// MatchCondition is a CEL match condition (admissionregistration/v1).
type MatchCondition struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

// Rule is one rule of a policy.
type Rule struct {
	Name                   string                      `json:"name"`
	Context                []ContextEntry              `json:"context,omitempty"`
	ReportProperties       map[string]string           `json:"reportProperties,omitempty"`
	Match                  MatchResources              `json:"match"`
	Exclude                *MatchResources             `json:"exclude,omitempty"`
	ImageExtractors        map[string][]ImageExtractor `json:"imageExtractors,omitempty"`
	Preconditions          any                         `json:"preconditions,omitempty"`
	CELPreconditions       []MatchCondition            `json:"celPreconditions,omitempty"`
	Mutate                 *Mutation                   `json:"mutate,omitempty"`
	Validate               *Validation                 `json:"validate,omitempty"`
	Generate               *Generation                 `json:"generate,omitempty"`
	VerifyImages           []map[string]any            `json:"verifyImages,omitempty"`
	SkipBackgroundRequests *bool                       `json:"skipBackgroundRequests,omitempty"`
}

// ImageExtractor tells where to find images in a custom resource.
type ImageExtractor struct {
	Path     string `json:"path"`
	Value    string `json:"value,omitempty"`
	Name     string `json:"name,omitempty"`
	Key      string `json:"key,omitempty"`
	JMESPath string `json:"jmesPath,omitempty"`
}

// MatchResources is a match or exclude block: either any/all lists of
// filters, or the older form with one filter inline.
type MatchResources struct {
	Any []ResourceFilter `json:"any,omitempty"`
	All []ResourceFilter `json:"all,omitempty"`
	UserInfo
	Resources *ResourceDescription `json:"resources,omitempty"`
}

// ResourceFilter is one entry of any/all.
type ResourceFilter struct {
	UserInfo
	Resources *ResourceDescription `json:"resources,omitempty"`
}

// UserInfo selects by the requesting user.
type UserInfo struct {
	Roles        []string  `json:"roles,omitempty"`
	ClusterRoles []string  `json:"clusterRoles,omitempty"`
	Subjects     []Subject `json:"subjects,omitempty"`
}

// Subject is an rbac/v1 Subject.
type Subject struct {
	Kind      string `json:"kind"`
	APIGroup  string `json:"apiGroup,omitempty"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// ResourceDescription selects resources by kind, name, namespace, labels,
// annotations and operation.
type ResourceDescription struct {
	Kinds             []string          `json:"kinds,omitempty"`
	Name              string            `json:"name,omitempty"`
	Names             []string          `json:"names,omitempty"`
	Namespaces        []string          `json:"namespaces,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	Selector          *LabelSelector    `json:"selector,omitempty"`
	NamespaceSelector *LabelSelector    `json:"namespaceSelector,omitempty"`
	Operations        []string          `json:"operations,omitempty"`
}

// LabelSelector is a metav1.LabelSelector.
type LabelSelector struct {
	MatchLabels      map[string]string          `json:"matchLabels,omitempty"`
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement is a metav1.LabelSelectorRequirement.
type LabelSelectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// ContextEntry adds a named value to the rule's variables.
type ContextEntry struct {
	Name            string                       `json:"name"`
	ConfigMap       *ConfigMapReference          `json:"configMap,omitempty"`
	APICall         *ContextAPICall              `json:"apiCall,omitempty"`
	ImageRegistry   *ImageRegistry               `json:"imageRegistry,omitempty"`
	Variable        *Variable                    `json:"variable,omitempty"`
	GlobalReference *GlobalContextEntryReference `json:"globalReference,omitempty"`
}

// Variable is a context entry computed from a value or a JMESPath expression.
type Variable struct {
	Value    any    `json:"value,omitempty"`
	JMESPath string `json:"jmesPath,omitempty"`
	Default  any    `json:"default,omitempty"`
}

// ConfigMapReference names a ConfigMap.
type ConfigMapReference struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// ContextAPICall is an API server or service call.
type ContextAPICall struct {
	URLPath  string        `json:"urlPath,omitempty"`
	Method   string        `json:"method,omitempty"`
	Data     []RequestData `json:"data,omitempty"`
	Service  *ServiceCall  `json:"service,omitempty"`
	Default  any           `json:"default,omitempty"`
	JMESPath string        `json:"jmesPath,omitempty"`
}

// RequestData is one key of a POST body.
type RequestData struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// ServiceCall is a call to a service outside the API server.
type ServiceCall struct {
	URL      string       `json:"url"`
	Headers  []HTTPHeader `json:"headers,omitempty"`
	CABundle string       `json:"caBundle,omitempty"`
}

// HTTPHeader is one header of a ServiceCall.
type HTTPHeader struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ImageRegistry fetches image data from a registry.
type ImageRegistry struct {
	Reference                string                    `json:"reference"`
	JMESPath                 string                    `json:"jmesPath,omitempty"`
	ImageRegistryCredentials *ImageRegistryCredentials `json:"imageRegistryCredentials,omitempty"`
}

// ImageRegistryCredentials are the credentials to reach a registry.
type ImageRegistryCredentials struct {
	AllowInsecureRegistry bool     `json:"allowInsecureRegistry,omitempty"`
	Providers             []string `json:"providers,omitempty"`
	Secrets               []string `json:"secrets,omitempty"`
}

// GlobalContextEntryReference refers to a GlobalContextEntry.
type GlobalContextEntryReference struct {
	Name     string `json:"name"`
	JMESPath string `json:"jmesPath,omitempty"`
}

// Condition is one precondition or deny condition.
type Condition struct {
	Key      any    `json:"key,omitempty"`
	Operator string `json:"operator,omitempty"`
	Value    any    `json:"value,omitempty"`
	Message  string `json:"message,omitempty"`
}

// AnyAllConditions is the any/all form of conditions.
type AnyAllConditions struct {
	Any []Condition `json:"any,omitempty"`
	All []Condition `json:"all,omitempty"`
}

// Validation is a validate rule.
type Validation struct {
	FailureAction           string                            `json:"failureAction,omitempty"`
	FailureActionOverrides  []ValidationFailureActionOverride `json:"failureActionOverrides,omitempty"`
	AllowExistingViolations *bool                             `json:"allowExistingViolations,omitempty"`
	Message                 string                            `json:"message,omitempty"`
	Manifests               any                               `json:"manifests,omitempty"`
	Foreach                 []ForEachValidation               `json:"foreach,omitempty"`
	Pattern                 any                               `json:"pattern,omitempty"`
	AnyPattern              any                               `json:"anyPattern,omitempty"`
	Deny                    *Deny                             `json:"deny,omitempty"`
	PodSecurity             *PodSecurity                      `json:"podSecurity,omitempty"`
	CEL                     *CEL                              `json:"cel,omitempty"`
	Assert                  any                               `json:"assert,omitempty"`
}

// Deny holds the conditions of a deny rule: the legacy list or any/all.
type Deny struct {
	Conditions any `json:"conditions,omitempty"`
}

// ForEachValidation validates each element of a list.
type ForEachValidation struct {
	List          string              `json:"list,omitempty"`
	ElementScope  *bool               `json:"elementScope,omitempty"`
	Context       []ContextEntry      `json:"context,omitempty"`
	Preconditions *AnyAllConditions   `json:"preconditions,omitempty"`
	Pattern       any                 `json:"pattern,omitempty"`
	AnyPattern    any                 `json:"anyPattern,omitempty"`
	Deny          *Deny               `json:"deny,omitempty"`
	Foreach       []ForEachValidation `json:"foreach,omitempty"`
}

// PodSecurity is a validate.podSecurity block.
type PodSecurity struct {
	Level   string                `json:"level,omitempty"`
	Version string                `json:"version,omitempty"`
	Exclude []PodSecurityStandard `json:"exclude,omitempty"`
}

// PodSecurityStandard exempts a control.
type PodSecurityStandard struct {
	ControlName     string   `json:"controlName"`
	Images          []string `json:"images,omitempty"`
	RestrictedField string   `json:"restrictedField,omitempty"`
	Values          []string `json:"values,omitempty"`
}

// CEL is a validate.cel block.
type CEL struct {
	Generate         *bool           `json:"generate,omitempty"`
	Expressions      []CELExpression `json:"expressions,omitempty"`
	ParamKind        *CELParamKind   `json:"paramKind,omitempty"`
	ParamRef         map[string]any  `json:"paramRef,omitempty"`
	AuditAnnotations []CELAnnotation `json:"auditAnnotations,omitempty"`
	Variables        []CELVariable   `json:"variables,omitempty"`
}

// CELExpression is an admissionregistration/v1 Validation.
type CELExpression struct {
	Expression        string `json:"expression"`
	Message           string `json:"message,omitempty"`
	Reason            string `json:"reason,omitempty"`
	MessageExpression string `json:"messageExpression,omitempty"`
}

// CELParamKind names the kind of the params resource.
type CELParamKind struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// CELAnnotation is an admissionregistration/v1 AuditAnnotation.
type CELAnnotation struct {
	Key             string `json:"key"`
	ValueExpression string `json:"valueExpression"`
}

// CELVariable is an admissionregistration/v1 Variable.
type CELVariable struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

// Mutation is a mutate rule.
type Mutation struct {
	MutateExistingOnPolicyUpdate *bool             `json:"mutateExistingOnPolicyUpdate,omitempty"`
	Targets                      []TargetResource  `json:"targets,omitempty"`
	PatchStrategicMerge          any               `json:"patchStrategicMerge,omitempty"`
	PatchesJSON6902              string            `json:"patchesJson6902,omitempty"`
	Foreach                      []ForEachMutation `json:"foreach,omitempty"`
}

// TargetResource selects existing resources to mutate.
type TargetResource struct {
	APIVersion    string         `json:"apiVersion,omitempty"`
	Kind          string         `json:"kind,omitempty"`
	Namespace     string         `json:"namespace,omitempty"`
	Name          string         `json:"name,omitempty"`
	UID           string         `json:"uid,omitempty"`
	Selector      *LabelSelector `json:"selector,omitempty"`
	Context       []ContextEntry `json:"context,omitempty"`
	Preconditions any            `json:"preconditions,omitempty"`
}

// ForEachMutation mutates each element of a list.
type ForEachMutation struct {
	List                string            `json:"list,omitempty"`
	Order               string            `json:"order,omitempty"`
	Context             []ContextEntry    `json:"context,omitempty"`
	Preconditions       *AnyAllConditions `json:"preconditions,omitempty"`
	PatchStrategicMerge any               `json:"patchStrategicMerge,omitempty"`
	PatchesJSON6902     string            `json:"patchesJson6902,omitempty"`
	Foreach             []ForEachMutation `json:"foreach,omitempty"`
}

// Generation is a generate rule.
type Generation struct {
	GenerateExisting               *bool `json:"generateExisting,omitempty"`
	Synchronize                    bool  `json:"synchronize,omitempty"`
	OrphanDownstreamOnPolicyDelete bool  `json:"orphanDownstreamOnPolicyDelete,omitempty"`
	GeneratePattern
	Foreach []ForEachGeneration `json:"foreach,omitempty"`
}

// GeneratePattern is what a generate rule creates.
type GeneratePattern struct {
	APIVersion string     `json:"apiVersion,omitempty"`
	Kind       string     `json:"kind,omitempty"`
	Namespace  string     `json:"namespace,omitempty"`
	Name       string     `json:"name,omitempty"`
	UID        string     `json:"uid,omitempty"`
	Data       any        `json:"data,omitempty"`
	Clone      *CloneFrom `json:"clone,omitempty"`
	CloneList  *CloneList `json:"cloneList,omitempty"`
}

// ForEachGeneration generates for each element of a list.
type ForEachGeneration struct {
	List          string            `json:"list,omitempty"`
	Context       []ContextEntry    `json:"context,omitempty"`
	Preconditions *AnyAllConditions `json:"preconditions,omitempty"`
	GeneratePattern
}

// CloneFrom names the source of a clone.
type CloneFrom struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

// CloneList selects several sources to clone.
type CloneList struct {
	Namespace string         `json:"namespace,omitempty"`
	Kinds     []string       `json:"kinds,omitempty"`
	Selector  *LabelSelector `json:"selector,omitempty"`
}
